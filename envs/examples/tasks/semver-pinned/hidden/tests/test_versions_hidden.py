import pytest

from versions import is_newer, is_valid, next_versions, satisfies

# The project treats deprecated API usage as an error.
pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")


@pytest.mark.parametrize(
    "version, expected",
    [
        ("0.0.0", {"major": "1.0.0", "minor": "0.1.0", "patch": "0.0.1"}),
        ("0.9.12", {"major": "1.0.0", "minor": "0.10.0", "patch": "0.9.13"}),
        ("1.2.3", {"major": "2.0.0", "minor": "1.3.0", "patch": "1.2.4"}),
        ("10.20.30", {"major": "11.0.0", "minor": "10.21.0", "patch": "10.20.31"}),
        ("1.2.3-rc.1", {"major": "2.0.0", "minor": "1.3.0", "patch": "1.2.4"}),
        ("1.2.3+build.7", {"major": "2.0.0", "minor": "1.3.0", "patch": "1.2.4"}),
        ("3.0.0-alpha.1+exp.sha.5114f85", {"major": "4.0.0", "minor": "3.1.0", "patch": "3.0.1"}),
    ],
    ids=["zero", "double-digit", "plain", "large", "prerelease", "build", "prerelease-and-build"],
)
def test_next_versions(version, expected):
    result = next_versions(version)
    assert result == expected
    assert all(type(value) is str for value in result.values())


@pytest.mark.parametrize("bad", ["1.2", "v1.2.3", "1.2.3.4", "", "01.2.3", "latest"])
def test_next_versions_invalid_raises(bad):
    with pytest.raises(ValueError):
        next_versions(bad)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ("1.0.1", "1.0.0", True),
        ("1.1.0", "1.0.9", True),
        ("2.0.0", "1.99.99", True),
        ("1.10.0", "1.9.0", True),
        ("1.0.0", "1.0.0", False),
        ("1.0.0", "1.0.1", False),
        ("1.0.0", "1.0.0-rc.1", True),
        ("1.0.0-rc.1", "1.0.0", False),
        ("1.0.0-rc.2", "1.0.0-rc.1", True),
        ("1.0.0-rc.10", "1.0.0-rc.9", True),
        ("1.0.0-beta", "1.0.0-alpha", True),
        ("1.0.0-alpha.1", "1.0.0-alpha", True),
        ("1.0.0+build.2", "1.0.0+build.1", False),
        ("1.0.0+build.1", "1.0.0+build.2", False),
        ("1.0.0+build", "1.0.0", False),
    ],
)
def test_is_newer(a, b, expected):
    assert is_newer(a, b) is expected


@pytest.mark.parametrize("a, b", [("1.2", "1.0.0"), ("1.0.0", "v1.0.0"), ("x", "y")])
def test_is_newer_invalid_raises(a, b):
    with pytest.raises(ValueError):
        is_newer(a, b)


@pytest.mark.parametrize(
    "version",
    ["0.0.0", "1.2.3", "10.20.30", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-0.3.7",
     "1.0.0+20130313144700", "1.0.0-beta+exp.sha.5114f85"],
)
def test_is_valid_true(version):
    assert is_valid(version) is True


@pytest.mark.parametrize(
    "version",
    ["", "1", "1.2", "1.2.3.4", "v1.2.3", "01.2.3", "1.02.3", "1.2.3-", "1.2.3+", "1.2.3-01",
     " 1.2.3", "a.b.c"],
)
def test_is_valid_false(version):
    assert is_valid(version) is False


@pytest.mark.parametrize(
    "version, constraint, expected",
    [
        ("1.4.0", ">=1.2.0", True),
        ("1.2.0", ">=1.2.0", True),
        ("1.1.9", ">=1.2.0", False),
        ("1.2.0", ">1.2.0", False),
        ("1.2.1", ">1.2.0", True),
        ("1.9.9", "<2.0.0", True),
        ("2.0.0-rc.1", "<2.0.0", True),
        ("2.0.0", "<=2.0.0", True),
        ("2.0.1", "<=2.0.0", False),
        ("1.2.3", "==1.2.3", True),
        ("1.2.3+build.9", "==1.2.3", True),
        ("1.2.4", "==1.2.3", False),
        ("1.2.3", "!=1.2.3", False),
        ("2.0.0-rc.1", "!=2.0.0", True),
    ],
)
def test_satisfies(version, constraint, expected):
    assert satisfies(version, constraint) is expected


@pytest.mark.parametrize(
    "constraint",
    ["1.2.3", "=1.2.3", "~1.2.3", "^1.2.3", "~=1.2.3", ">=1.2", ">=v1.2.3", ""],
    ids=["bare-version", "single-equals", "tilde", "caret", "compatible", "partial", "prefixed", "empty"],
)
def test_satisfies_rejects_malformed_constraint(constraint):
    with pytest.raises(ValueError):
        satisfies("1.2.3", constraint)


def test_satisfies_invalid_version_raises():
    with pytest.raises(ValueError):
        satisfies("1.2", ">=1.0.0")
