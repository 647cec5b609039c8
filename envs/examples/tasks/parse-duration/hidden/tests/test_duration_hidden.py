import pytest

from duration import parse_duration

VALID = {
    "seconds": ("45s", 45),
    "zero": ("0s", 0),
    "minutes": ("5m", 300),
    "hours": ("2h", 7200),
    "days": ("1d", 86400),
    "weeks": ("1w", 604800),
    "h-m": ("1h30m", 5400),
    "h-m-s": ("1h2m3s", 3723),
    "all-units": ("1w2d3h4m5s", 604800 + 2 * 86400 + 3 * 3600 + 4 * 60 + 5),
    "spaced": ("2d 3h", 183600),
    "spaced-all": ("1w 1d 1h 1m 1s", 604800 + 86400 + 3600 + 60 + 1),
    "many-spaces": ("1h   15m", 4500),
    "tab-separated": ("1h\t15m", 4500),
    "surrounding-whitespace": ("  10m \n", 600),
    "mixed-separators": ("1d2h 3m", 86400 + 7200 + 180),
    "uppercase": ("2H30M", 9000),
    "mixed-case": ("1D 1h", 90000),
    "beyond-natural-range": ("90m", 5400),
    "many-seconds": ("3600s", 3600),
    "leading-zeros": ("007s", 7),
    "zero-components": ("0h0m0s", 0),
    "skipped-units": ("1d 30s", 86430),
    "large": ("100000w", 100000 * 604800),
}


@pytest.mark.parametrize("text, seconds", list(VALID.values()), ids=list(VALID))
def test_valid_durations(text, seconds):
    assert parse_duration(text) == seconds


def test_returns_int():
    result = parse_duration("1h")
    assert type(result) is int


INVALID = {
    "empty": "",
    "blank": "   ",
    "word": "soon",
    "bare-number": "10",
    "trailing-number": "1h30",
    "decimal": "1.5h",
    "negative": "-5m",
    "plus-sign": "+5m",
    "space-before-unit": "5 m",
    "unknown-unit": "3x",
    "unit-only": "h",
    "long-unit-name": "5min",
    "word-unit": "2 hours",
    "out-of-order": "30m1h",
    "out-of-order-spaced": "1s 1m",
    "repeated-unit": "1h1h",
    "repeated-unit-spaced": "1m 2m",
    "comma-separated": "1h,30m",
    "trailing-garbage": "1h30m!",
    "leading-garbage": "~1h",
    "non-ascii-digits": "\u0661\u0662s",
    "fullwidth-digit": "\uff15m",
}


@pytest.mark.parametrize("text", list(INVALID.values()), ids=list(INVALID))
def test_invalid_durations_raise_value_error(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("value", [None, 60, b"1h", ["1h"]], ids=["none", "int", "bytes", "list"])
def test_non_string_raises_type_error(value):
    with pytest.raises(TypeError):
        parse_duration(value)
