"""Conversion between integers and Roman numerals.

Only the standard, strictly subtractive notation is supported: the symbols
I, V, X, L, C, D and M, where a smaller symbol written before a larger one is
subtracted (IV = 4, IX = 9, XL = 40, XC = 90, CD = 400, CM = 900). Numbers are
limited to the range 1..3999, the largest value that can be written without
overlines.
"""


def to_roman(n: int) -> str:
    """Return the Roman numeral for ``n``.

    The result uses uppercase letters and the canonical (shortest, strictly
    subtractive) form, e.g. ``to_roman(4) == "IV"``,
    ``to_roman(1994) == "MCMXCIV"``.

    Raises:
        TypeError: if ``n`` is not an ``int`` (``bool`` is rejected too).
        ValueError: if ``n`` is not in the range 1..3999.
    """
    raise NotImplementedError


def from_roman(s: str) -> int:
    """Return the integer value of the Roman numeral ``s``.

    Only canonical numerals are accepted, i.e. exactly the strings that
    :func:`to_roman` produces: uppercase letters, no surrounding whitespace,
    no more than three repetitions of I, X, C or M in a row, no repeated V, L
    or D, and only the six standard subtractive pairs. For every valid
    ``s``, ``to_roman(from_roman(s)) == s``.

    Raises:
        TypeError: if ``s`` is not a ``str``.
        ValueError: if ``s`` is empty or not a canonical Roman numeral,
            e.g. ``"IIII"``, ``"VV"``, ``"IC"``, ``"MMMM"``, ``"iv"`` or ``" X"``.
    """
    raise NotImplementedError
