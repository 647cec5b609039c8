import pytest

from duration import parse_duration


def test_seconds():
    assert parse_duration("45s") == 45


def test_hours_and_minutes():
    assert parse_duration("1h30m") == 5400


def test_days_and_hours_with_space():
    assert parse_duration("2d 3h") == 2 * 86400 + 3 * 3600


def test_garbage_raises():
    with pytest.raises(ValueError):
        parse_duration("soon")
