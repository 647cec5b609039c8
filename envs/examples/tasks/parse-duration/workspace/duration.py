"""Parsing of human-friendly duration strings such as ``"1h30m"``."""


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
    raise NotImplementedError
