import unittest

from calc.stats import mean, median, value_range


class MeanTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3, 4]), 2.5)

    def test_mean_empty(self):
        with self.assertRaises(ValueError):
            mean([])


class MedianTest(unittest.TestCase):
    def test_odd_length(self):
        self.assertEqual(median([5, 1, 3]), 3)

    def test_even_length(self):
        self.assertEqual(median([4, 1, 3, 2]), 2.5)

    def test_even_length_two_values(self):
        self.assertEqual(median([10, 20]), 15)

    def test_unsorted_input_is_not_modified(self):
        data = [3, 1, 2, 8]
        self.assertEqual(median(data), 2.5)
        self.assertEqual(data, [3, 1, 2, 8])

    def test_empty(self):
        with self.assertRaises(ValueError):
            median([])


class RangeTest(unittest.TestCase):
    def test_range(self):
        self.assertEqual(value_range([7, -2, 4]), 9)


if __name__ == "__main__":
    unittest.main()
