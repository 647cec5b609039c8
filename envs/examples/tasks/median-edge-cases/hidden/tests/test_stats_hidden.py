import math
from decimal import Decimal
from fractions import Fraction

import pytest

from stats import median, percentile


# --- behaviour that already worked ------------------------------------------

def test_median_unsorted_odd():
    assert median([9, -3, 5, 0, 7]) == 5


def test_median_with_duplicates():
    assert median([2, 2, 2, 1, 3, 3]) == 2


def test_median_negative_even():
    assert median([-5, -1, -3, -2]) == -2.5


def test_percentile_quartiles():
    data = [15, 20, 35, 40, 50]
    assert percentile(data[:], 25) == 20
    assert percentile(data[:], 75) == 40
    assert percentile(data[:], 40) == pytest.approx(29)


# --- input handling -----------------------------------------------------------

def test_median_does_not_mutate_list():
    data = [5, 3, 9, 1, 7]
    assert median(data) == 5
    assert data == [5, 3, 9, 1, 7]


def test_percentile_does_not_mutate_list():
    data = [40, 10, 30, 20]
    assert percentile(data, 50) == 25
    assert data == [40, 10, 30, 20]


def test_median_accepts_tuple():
    assert median((3, 1, 2)) == 2


def test_median_accepts_generator():
    assert median(x * x for x in range(1, 6)) == 9


def test_median_accepts_iterator_even_length():
    assert median(iter([4, 1, 3, 2])) == 2.5


def test_median_accepts_set():
    assert median({10, 30, 20}) == 20


def test_median_accepts_range():
    assert median(range(1, 101)) == 50.5


def test_percentile_accepts_generator():
    assert percentile((x for x in [1, 2, 3, 4, 5]), 75) == 4


def test_percentile_accepts_tuple():
    assert percentile((7, 1, 3), 100) == 7


def test_median_preserves_type_of_middle_item():
    assert median([Fraction(1, 3), Fraction(1, 7), Fraction(1, 2)]) == Fraction(1, 3)
    assert median([Decimal("1.10"), Decimal("0.05"), Decimal("3")]) == Decimal("1.10")
    assert isinstance(median([Decimal("1.10"), Decimal("0.05"), Decimal("3")]), Decimal)


# --- empty input ---------------------------------------------------------------

@pytest.mark.parametrize(
    "empty",
    [[], (), iter([]), (x for x in [])],
    ids=["list", "tuple", "iterator", "generator"],
)
def test_median_empty_raises(empty):
    with pytest.raises(ValueError, match=r"^median of empty data$"):
        median(empty)


def test_percentile_empty_raises():
    with pytest.raises(ValueError, match=r"^percentile of empty data$"):
        percentile([], 50)


# --- percentile range ------------------------------------------------------------

@pytest.mark.parametrize("p", [-10, -0.5, 100.5, 150, math.nan], ids=["-10", "-0.5", "100.5", "150", "nan"])
def test_percentile_out_of_range_raises(p):
    with pytest.raises(ValueError):
        percentile([1, 2, 3, 4, 5], p)


def test_percentile_single_value():
    assert percentile([42], 0) == 42
    assert percentile([42], 37.5) == 42
    assert percentile([42], 100) == 42
