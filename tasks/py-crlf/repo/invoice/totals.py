"""Invoice arithmetic with exact decimal amounts (euros, rounded to cents)."""

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def to_cents(amount):
    """Round a Decimal amount to whole cents, halves away from zero."""
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def line_total(quantity, unit_price, discount_percent=0):
    """Price of one invoice line in cents: quantity x unit price, less a percentage discount.

    Prices are given as strings ("19.99") so that no binary floating point is involved.
    """
    gross = Decimal(quantity) * Decimal(unit_price)
    discount = gross * Decimal(discount_percent)
    return to_cents(gross - discount)


def invoice_total(lines, tax_percent):
    """Net, tax and gross totals for an invoice of (quantity, unit_price, discount_percent) lines."""
    net = sum((line_total(*line) for line in lines), Decimal("0"))
    tax = to_cents(net * Decimal(tax_percent) / 100)
    return {"net": net, "tax": tax, "gross": net + tax}
