"""Small descriptive-statistics helpers."""

import math


def median(values):
    """Return the median of the numbers in ``values``.

    ``values`` may be any iterable of numbers (list, tuple, set, generator,
    ...). It is iterated exactly once and is never modified; in particular a
    list passed by the caller keeps its original order.

    With the data sorted, the median of an odd number of items is the middle
    item itself (returned as is, so its type is preserved); for an even number
    of items it is the mean of the two middle items, ``(a + b) / 2``.

        >>> median([3, 1, 2])
        2
        >>> median([4, 1, 3, 2])
        2.5

    Raises:
        ValueError: with the message ``"median of empty data"`` if ``values``
            contains no items.
    """
    data = sorted(values)  # a new list: works for any iterable, input untouched
    n = len(data)
    if n == 0:
        raise ValueError("median of empty data")
    mid = n // 2
    if n % 2 == 1:
        return data[mid]
    return (data[mid - 1] + data[mid]) / 2


def percentile(values, p):
    """Return the ``p``-th percentile of the numbers in ``values``.

    Uses linear interpolation between the closest ranks (the "inclusive"
    method, like numpy's default and Excel's PERCENTILE.INC): with the data
    sorted as ``x[0] <= ... <= x[n-1]`` and ``k = (n - 1) * p / 100``, the
    result is ``x[floor(k)] + (x[ceil(k)] - x[floor(k)]) * (k - floor(k))``.
    So ``percentile(values, 0)`` is the minimum and ``percentile(values, 100)``
    the maximum.

    ``values`` follows the same rules as in :func:`median`: any iterable of
    numbers, iterated exactly once, never modified.

        >>> percentile([1, 2, 3, 4, 5], 25)
        2.0

    Raises:
        ValueError: with the message ``"percentile of empty data"`` if
            ``values`` contains no items, or if ``p`` is not a number
            within the closed range [0, 100].
    """
    # ``not (0 <= p <= 100)`` also rejects NaN, for which every comparison is False.
    if not 0 <= p <= 100:
        raise ValueError(f"percentile must be within [0, 100], got {p!r}")
    data = sorted(values)
    if not data:
        raise ValueError("percentile of empty data")
    k = (len(data) - 1) * p / 100
    f = math.floor(k)
    c = math.ceil(k)
    return data[f] + (data[c] - data[f]) * (k - f)
