import unittest
from decimal import Decimal

from invoice.totals import invoice_total, line_total, to_cents


class LineTotalTest(unittest.TestCase):
    def test_without_discount(self):
        self.assertEqual(line_total(3, "19.99"), Decimal("59.97"))

    def test_percentage_discount(self):
        self.assertEqual(line_total(2, "10.00", 15), Decimal("17.00"))

    def test_discount_is_rounded_to_cents(self):
        self.assertEqual(line_total(1, "9.99", 10), Decimal("8.99"))

    def test_full_discount(self):
        self.assertEqual(line_total(4, "2.50", 100), Decimal("0.00"))


class RoundingTest(unittest.TestCase):
    def test_half_cent_rounds_up(self):
        self.assertEqual(to_cents(Decimal("0.125")), Decimal("0.13"))


class InvoiceTotalTest(unittest.TestCase):
    def test_totals(self):
        lines = [(3, "19.99", 0), (2, "10.00", 15)]
        self.assertEqual(
            invoice_total(lines, 20),
            {"net": Decimal("76.97"), "tax": Decimal("15.39"), "gross": Decimal("92.36")},
        )

    def test_empty_invoice(self):
        self.assertEqual(
            invoice_total([], 20),
            {"net": Decimal("0"), "tax": Decimal("0.00"), "gross": Decimal("0.00")},
        )


if __name__ == "__main__":
    unittest.main()
