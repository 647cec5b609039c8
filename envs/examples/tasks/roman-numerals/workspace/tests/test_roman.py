import pytest

from roman import from_roman, to_roman


@pytest.mark.parametrize(
    "number, numeral",
    [(1, "I"), (4, "IV"), (9, "IX"), (14, "XIV"), (40, "XL"), (1994, "MCMXCIV")],
)
def test_to_roman(number, numeral):
    assert to_roman(number) == numeral


@pytest.mark.parametrize(
    "numeral, number",
    [("III", 3), ("LVIII", 58), ("XC", 90), ("MMXXIV", 2024)],
)
def test_from_roman(numeral, number):
    assert from_roman(numeral) == number


def test_out_of_range_raises():
    with pytest.raises(ValueError):
        to_roman(0)
