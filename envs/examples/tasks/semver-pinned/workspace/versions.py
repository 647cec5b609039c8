"""Release helpers built on the ``semver`` package.

This project pins ``semver==2.13.0`` (see requirements.txt); the code must
work with that exact version.
"""

import semver  # noqa: F401  (semver==2.13.0)


def next_versions(v: str) -> dict:
    """Return the candidate next releases of version ``v``.

    The result maps ``"major"``, ``"minor"`` and ``"patch"`` to the version
    string obtained by bumping that component with semver's usual rules:
    lower components are reset to zero and any prerelease or build suffix
    is dropped.

        >>> next_versions("1.2.3")
        {'major': '2.0.0', 'minor': '1.3.0', 'patch': '1.2.4'}

    Raises:
        ValueError: if ``v`` is not a valid semantic version string.
    """
    raise NotImplementedError


def is_newer(a: str, b: str) -> bool:
    """Return True if version ``a`` has strictly higher precedence than ``b``.

    Precedence follows the Semantic Versioning 2.0.0 spec: a prerelease is
    lower than the corresponding release (``1.0.0-rc.1`` < ``1.0.0``) and
    build metadata is ignored, so ``is_newer("1.0.0+build.2", "1.0.0+build.1")``
    is False.

    Raises:
        ValueError: if either argument is not a valid semantic version string.
    """
    raise NotImplementedError


def is_valid(v: str) -> bool:
    """Return True if ``v`` is a valid semantic version string, else False.

    Only full ``MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]`` strings are valid;
    partial versions such as ``"1.2"`` or prefixed ones such as ``"v1.2.3"``
    are not. Never raises for string input.
    """
    raise NotImplementedError


def satisfies(v: str, constraint: str) -> bool:
    """Return True if version ``v`` satisfies ``constraint``.

    ``constraint`` is a single comparison: an operator immediately followed
    by a full version, where the operator is one of ``<``, ``>``, ``<=``,
    ``>=``, ``==`` or ``!=`` (e.g. ``">=1.2.0"``, ``"!=2.0.0-rc.1"``).
    Comparison uses semver precedence as in :func:`is_newer`.

    Raises:
        ValueError: if ``v`` is not a valid version, or if ``constraint`` does
            not have the form described above. In particular a bare version
            without an operator (``"1.2.3"``) and unsupported operators
            (``"=1.2.3"``, ``"~1.2.3"``, ``"^1.2.3"``) are rejected.
    """
    raise NotImplementedError
