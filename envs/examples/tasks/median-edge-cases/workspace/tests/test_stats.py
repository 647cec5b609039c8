from stats import median, percentile


def test_median_odd_length():
    assert median([3, 1, 2]) == 2


def test_median_even_length():
    assert median([4, 1, 3, 2]) == 2.5


def test_median_single_value():
    assert median([7]) == 7


def test_median_floats():
    assert median([0.5, 2.5, 1.5]) == 1.5


def test_percentile_bounds():
    assert percentile([5, 1, 4, 2, 3], 0) == 1
    assert percentile([5, 1, 4, 2, 3], 100) == 5


def test_percentile_interpolates():
    assert percentile([1, 2, 3, 4, 5], 25) == 2
    assert percentile([10, 20, 30, 40], 50) == 25
