"""Money helpers.

All amounts are :class:`decimal.Decimal` values rounded to whole cents with
ROUND_HALF_UP, the rounding mode used on our receipts. Floats are rejected
so that binary rounding errors cannot creep into prices.
"""

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def to_decimal(value) -> Decimal:
    """Convert an ``int``, ``str`` or ``Decimal`` to ``Decimal``.

    Raises:
        TypeError: for floats (and anything else that is not int/str/Decimal).
    """
    if isinstance(value, bool) or not isinstance(value, (int, str, Decimal)):
        raise TypeError(f"money values must be int, str or Decimal, not {type(value).__name__}")
    return Decimal(value)


def money(value) -> Decimal:
    """Round ``value`` to whole cents (ROUND_HALF_UP)."""
    return to_decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def percent_of(amount, percent) -> Decimal:
    """Return ``percent`` % of ``amount``, rounded to cents.

    >>> percent_of("19.99", "8.25")
    Decimal('1.65')
    """
    return money(to_decimal(amount) * to_decimal(percent) / 100)
