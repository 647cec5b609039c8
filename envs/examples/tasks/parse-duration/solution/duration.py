"""Parsing of human-friendly duration strings such as ``"1h30m"``."""

import re

# Units from largest to smallest; the order matters for validation.
_UNITS = (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
_UNIT_RANK = {unit: rank for rank, (unit, _) in enumerate(_UNITS)}
_UNIT_SECONDS = dict(_UNITS)

# One component: ASCII digits directly followed by a unit letter, then either
# whitespace, the next component's digits, or the end of the string.
_COMPONENT = re.compile(r"([0-9]+)([wdhms])(?:\s+|(?=[0-9])|$)", re.ASCII | re.IGNORECASE)


def parse_duration(text: str) -> int:
    """Return the number of seconds described by ``text``.

    A duration is a sequence of one or more components, each a non-negative
    integer immediately followed by a unit:

    ====  =======  ==========
    unit  meaning  seconds
    ====  =======  ==========
    w     weeks    604800
    d     days     86400
    h     hours    3600
    m     minutes  60
    s     seconds  1
    ====  =======  ==========

    Rules:

    * Units are case-insensitive (``"2H"`` == ``"2h"``).
    * Components may be separated by whitespace (``"2d 3h"``) or written
      together (``"2d3h"``); leading and trailing whitespace is ignored.
      There must be no whitespace between a number and its unit.
    * Each unit may appear at most once, and units must appear from largest
      to smallest (``"1h30m"`` is valid, ``"30m1h"`` and ``"1h1h"`` are not).
    * A component's value is not limited to its "natural" range:
      ``"90m"`` is 5400 seconds and ``"0s"`` is 0.
    * Only ASCII digits 0-9 are allowed; signs, decimal points and bare
      numbers without a unit are invalid.

    Examples::

        >>> parse_duration("45s")
        45
        >>> parse_duration("1h30m")
        5400
        >>> parse_duration("2d 3h")
        183600

    Raises:
        TypeError: if ``text`` is not a ``str``.
        ValueError: if ``text`` is empty/blank or not a valid duration
            according to the rules above (e.g. ``"10"``, ``"1.5h"``,
            ``"-5m"``, ``"5 m"``, ``"3x"``, ``"30m1h"``).
    """
    if not isinstance(text, str):
        raise TypeError(f"expected a str, got {type(text).__name__}")
    s = text.strip()
    if not s:
        raise ValueError("empty duration")

    total = 0
    pos = 0
    last_rank = -1
    while pos < len(s):
        match = _COMPONENT.match(s, pos)
        if match is None:
            raise ValueError(f"invalid duration {text!r} at position {pos}")
        number, unit = match.group(1), match.group(2).lower()
        rank = _UNIT_RANK[unit]
        if rank <= last_rank:
            raise ValueError(f"invalid duration {text!r}: unit {unit!r} repeated or out of order")
        last_rank = rank
        total += int(number) * _UNIT_SECONDS[unit]
        pos = match.end()
    return total
