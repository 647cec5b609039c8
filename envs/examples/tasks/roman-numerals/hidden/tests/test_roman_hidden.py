import pytest

from roman import from_roman, to_roman

KNOWN = [
    (1, "I"),
    (2, "II"),
    (3, "III"),
    (4, "IV"),
    (5, "V"),
    (6, "VI"),
    (9, "IX"),
    (10, "X"),
    (40, "XL"),
    (49, "XLIX"),
    (90, "XC"),
    (99, "XCIX"),
    (400, "CD"),
    (444, "CDXLIV"),
    (500, "D"),
    (900, "CM"),
    (999, "CMXCIX"),
    (1000, "M"),
    (1666, "MDCLXVI"),
    (2024, "MMXXIV"),
    (3888, "MMMDCCCLXXXVIII"),
    (3999, "MMMCMXCIX"),
]


@pytest.mark.parametrize("number, numeral", KNOWN)
def test_to_roman_known_values(number, numeral):
    assert to_roman(number) == numeral


@pytest.mark.parametrize("number, numeral", KNOWN)
def test_from_roman_known_values(number, numeral):
    assert from_roman(numeral) == number


def test_round_trip_full_range():
    seen = set()
    for n in range(1, 4000):
        numeral = to_roman(n)
        assert from_roman(numeral) == n
        seen.add(numeral)
    assert len(seen) == 3999


@pytest.mark.parametrize("number", [0, -1, -3999, 4000, 10**6])
def test_to_roman_out_of_range(number):
    with pytest.raises(ValueError):
        to_roman(number)


@pytest.mark.parametrize(
    "value",
    [4.0, "4", None, True],
    ids=["float", "str", "none", "bool"],
)
def test_to_roman_rejects_non_int(value):
    with pytest.raises(TypeError):
        to_roman(value)


INVALID = {
    "empty": "",
    "four-I": "IIII",
    "repeated-V": "VV",
    "repeated-L": "LL",
    "repeated-D": "DD",
    "four-M": "MMMM",
    "I-before-C": "IC",
    "I-before-L": "IL",
    "X-before-D": "XD",
    "X-before-M": "XM",
    "V-before-X": "VX",
    "double-subtraction": "IIV",
    "IX-twice": "IXIX",
    "XC-then-X": "XCX",
    "CM-then-M": "CMM",
    "lowercase": "iv",
    "mixed-case": "Xi",
    "leading-space": " X",
    "trailing-space": "X ",
    "not-roman": "ABC",
    "inner-space": "I I",
}


@pytest.mark.parametrize("numeral", list(INVALID.values()), ids=list(INVALID))
def test_from_roman_rejects_invalid(numeral):
    with pytest.raises(ValueError):
        from_roman(numeral)


@pytest.mark.parametrize("value", [4, None, b"IV"], ids=["int", "none", "bytes"])
def test_from_roman_rejects_non_str(value):
    with pytest.raises(TypeError):
        from_roman(value)
