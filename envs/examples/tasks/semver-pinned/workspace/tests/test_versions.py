import pytest

from versions import is_newer, is_valid, next_versions, satisfies

# The project treats deprecated API usage as an error.
pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")


def test_next_versions_simple():
    assert next_versions("1.2.3") == {"major": "2.0.0", "minor": "1.3.0", "patch": "1.2.4"}


def test_is_newer_simple():
    assert is_newer("2.0.0", "1.9.9")
    assert not is_newer("1.9.9", "2.0.0")


def test_is_valid_simple():
    assert is_valid("1.2.3")
    assert not is_valid("not a version")


def test_satisfies_simple():
    assert satisfies("1.4.0", ">=1.2.0")
    assert not satisfies("1.4.0", "<1.2.0")
