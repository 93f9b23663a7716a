"""Descriptive statistics over plain lists of numbers."""


def mean(values):
    """Arithmetic mean of a non-empty sequence."""
    if not values:
        raise ValueError("mean of empty data")
    return sum(values) / len(values)


def median(values):
    """Middle value of a non-empty sequence; the mean of the two middle values if even."""
    if not values:
        raise ValueError("median of empty data")
    ordered = sorted(values)
    n = len(ordered)
    mid = n // 2
    if n % 2 == 1:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def value_range(values):
    """Difference between the largest and the smallest value."""
    if not values:
        raise ValueError("range of empty data")
    return max(values) - min(values)
