"""Ranges and targets: every expected value below was worked out by hand from the fixture
registries in tests/fixtures/deps (served over HTTP on 127.0.0.1), at a fixed clock of
2025-06-01T00:00Z.

Fixture facts used (npm): alpha 1.0.0 1.0.1 1.0.5 1.1.0 1.1.4 1.2.0 1.2.3 1.3.0-beta.1 2.0.0
2.1.0 2.2.0 (published 2025-05-30) 3.0.0-rc.1, latest → 2.2.0; beta 0.1.0 0.1.5 0.2.0 0.2.7
0.3.1 1.0.0 (deprecated) 1.0.1, latest → 1.0.1; gamma 4.0.0 4.1.0 4.1.1 4.2.0 (deprecated)
5.0.0, latest → 4.1.1; delta 1.0.0 1.0.1 1.1.0 (no publish time), latest → 1.1.0; react 17.0.0
17.0.1 17.0.2 18.0.0 18.2.0 18.3.1 19.0.0 19.1.0; @scope/util 1.0.0 1.4.2 2.0.0.
(PyPI): requests 2.28.0 2.31.0 2.32.0 (yanked) 2.32.3 3.0.0b1, current 2.32.3; django 4.2.0
4.2.16 5.0.0 5.1.3 5.2.1 (uploaded 2025-05-31), current 5.2.1; attrs 23.1.0 24.2.0 25.3.0
(no files, so no upload time), current 25.3.0.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import cast

import pytest

from fixtures.deps.kit import NOW
from fixtures.deps.loopback import LoopbackRegistry
from tether.deps import npmspec, pyspec
from tether.deps.model import Declared, LeftAlone, Locus, Occurrence, ReleaseGate, Unmovable
from tether.deps.registries import Fetcher, Key, NpmRegistry, PypiIndex
from tether.deps.targets import AgePolicy, resolve
from tether.report.deps import left_alone

LOCUS = Locus("package.json", "dependencies", "json", ("dependencies", "x"))
DAY = timedelta(days=1)

# (ecosystem, package, declared, level, min release age, expected rewritten value or None)
UPDATES = [
    ("npm", "alpha", "^1.0.0", "patch", None, "^1.0.5"),
    ("npm", "alpha", "^1.0.0", "minor", None, "^1.2.3"),  # 1.3.0-beta.1 is no target
    ("npm", "alpha", "^1.0.0", "major", None, "^2.2.0"),  # the latest dist-tag
    ("npm", "alpha", "~1.1.0", "patch", None, "~1.1.4"),
    ("npm", "alpha", "~1.1.0", "minor", None, "~1.2.3"),  # the operator is kept
    ("npm", "alpha", "1.0.1", "patch", None, "1.0.5"),
    ("npm", "alpha", "=1.1.0", "minor", None, "=1.2.3"),
    ("npm", "alpha", "^1.2.3", "patch", None, None),  # 1.2.3 is the newest 1.2.x
    ("npm", "alpha", "^2.0.0", "minor", None, "^2.2.0"),
    ("npm", "alpha", "^2.0.0", "minor", 7 * DAY, "^2.1.0"),  # 2.2.0 is two days old
    ("npm", "alpha", "^1.3.0-beta.1", "minor", None, None),  # no stable 1.x above it
    ("npm", "alpha", "^3.0.0-rc.1", "major", None, None),  # latest (2.2.0) is below it
    ("npm", "alpha", "^v1.0.0", "patch", None, "^v1.0.5"),
    ("npm", "beta", "^0.1.0", "patch", None, "^0.1.5"),
    ("npm", "beta", "^0.1.0", "minor", None, "^0.3.1"),  # same major 0, as ncu does
    ("npm", "beta", "^0.2.0", "major", None, "^1.0.1"),
    ("npm", "beta", "1.0.0", "minor", None, "1.0.1"),
    ("npm", "gamma", "^4.0.0", "minor", None, "^4.1.1"),  # 4.2.0 is deprecated
    ("npm", "gamma", "^4.0.0", "major", None, "^4.1.1"),  # 5.0.0 is above latest
    ("npm", "gamma", "~4.1.0", "patch", None, "~4.1.1"),
    ("npm", "delta", "^1.0.0", "minor", None, "^1.1.0"),
    ("npm", "delta", "^1.0.0", "minor", DAY, "^1.0.1"),  # 1.1.0 has no time: fails closed
    ("npm", "react", "^17.0.0", "minor", None, "^17.0.2"),
    ("npm", "react", "^18.2.0", "minor", None, "^18.3.1"),
    ("npm", "react", "^18.2.0", "major", None, "^19.1.0"),
    ("npm", "@scope/util", "^1.0.0", "minor", None, "^1.4.2"),
    ("pypi", "requests", "requests>=2.28", "minor", None, "requests>=2.32.3"),  # 2.32.0 yanked
    ("pypi", "requests", "requests==2.31.0", "patch", None, None),
    ("pypi", "requests", "requests~=2.28", "minor", None, "requests~=2.32"),  # precision kept
    ("pypi", "requests", "requests~=2.28.0", "patch", None, None),  # 2.28.0 is the only 2.28
    (
        "pypi",
        "requests",
        'requests[socks] >= 2.28 ; python_version > "3.8"',
        "minor",
        None,
        'requests[socks] >= 2.32.3 ; python_version > "3.8"',
    ),
    ("pypi", "django", "django==4.2.0", "patch", None, "django==4.2.16"),
    ("pypi", "django", "Django>=4.2", "major", None, "Django>=5.2.1"),
    ("pypi", "django", "django>=4.2", "major", 7 * DAY, "django>=5.1.3"),
    ("pypi", "django", "django>=4.2", "minor", None, "django>=4.2.16"),
    ("pypi", "attrs", "attrs>=23.1.0", "major", None, "attrs>=25.3.0"),
    ("pypi", "attrs", "attrs>=23.1.0", "major", DAY, "attrs>=24.2.0"),  # no upload time
]

# declared → the words the skip reason must contain
NPM_SKIPS = [
    ("^1.0.0 || ^2.0.0", "union range"),
    (">=1.0.0 <2.0.0", "upper-bounded"),
    ("<2", "upper-bounded"),
    ("1.0.0 - 1.2.0", "hyphen range"),
    ("1.x", "x-range"),
    ("*", "x-range"),
    ("^1.2", "partial version"),
    (">=1.0.0", "open range"),
    ("latest", "not a semver range"),
    ("file:../alpha", "local path"),
    ("npm:alpha@^1.0.0", "npm alias"),
    ("github:someone/alpha", "git dependency"),
]
PY_SKIPS = [
    ("django>=4.2,<5", "upper-bounded"),
    ("django", "no version specifier"),
    ("django==4.*", "wildcard"),
    ("django!=4.2.1", "exclusion"),
    ("django @ https://example.invalid/django.tar.gz", "direct reference"),
]


@pytest.fixture(scope="module")
def fetcher() -> Iterator[Fetcher]:
    with LoopbackRegistry() as registry:
        yield Fetcher(
            {"npm": NpmRegistry(registry.url + "/"), "pypi": PypiIndex(registry.url + "/pypi")}
        )


def occurrence(ecosystem: str, package: str, declared: str) -> Occurrence:
    if ecosystem == "pypi":
        name, result = pyspec.classify(declared)
        assert name == package
    else:
        result = npmspec.classify(declared)
    assert isinstance(result, Declared), result
    return Occurrence("p", ecosystem, package, result, LOCUS, None, result.version)  # type: ignore[arg-type]


def test_the_table_has_enough_cases() -> None:
    assert len(UPDATES) + len(NPM_SKIPS) + len(PY_SKIPS) >= 30


@pytest.mark.parametrize(("ecosystem", "package", "declared", "level", "age", "expected"), UPDATES)
def test_target(
    fetcher: Fetcher,
    ecosystem: str,
    package: str,
    declared: str,
    level: str,
    age: timedelta | None,
    expected: str | None,
) -> None:
    key = cast(Key, (ecosystem, package))
    info = fetcher.fetch_all([key])[key].info
    assert info is not None
    resolved = resolve(occurrence(ecosystem, package, declared), info, level, AgePolicy(age), NOW)  # type: ignore[arg-type]
    written = resolved.target_declared.raw if resolved.target else None
    assert written == expected


@pytest.mark.parametrize(("declared", "reason"), NPM_SKIPS)
def test_npm_ranges_not_rewritten(declared: str, reason: str) -> None:
    result = npmspec.classify(declared)
    assert isinstance(result, LeftAlone) and reason in left_alone(result)


@pytest.mark.parametrize(("declared", "reason"), PY_SKIPS)
def test_python_requirements_not_rewritten(declared: str, reason: str) -> None:
    _, result = pyspec.classify(declared)
    assert isinstance(result, LeftAlone) and reason in left_alone(result)


def test_each_package_fetched_once(fetcher: Fetcher) -> None:
    with LoopbackRegistry() as registry:
        counting = Fetcher({"npm": NpmRegistry(registry.url)}, jobs=4)
        keys = [("npm", "alpha"), ("npm", "beta")] * 10 + [("npm", "no-such-package")] * 3
        answers = counting.fetch_all(keys)  # type: ignore[arg-type]
        counting.fetch_all([("npm", "alpha")])  # a second ask in the same run is free
        assert registry.total == 3
        assert answers[("npm", "no-such-package")].unknown


def test_project_cooldown_and_exclusions() -> None:
    pnpm = ReleaseGate("minimumReleaseAge 14400 (minutes)", 10 * DAY, ("@scope/*",))
    policy = AgePolicy(flag=DAY, gates=(pnpm,))
    assert policy.min_age("alpha") == 10 * DAY  # the stricter one wins
    assert policy.min_age("@scope/util") == DAY  # pnpm's exclusion spares only its own rule
    assert AgePolicy().min_age("alpha") is None


def test_every_reason_a_declaration_is_left_alone_is_worded_in_report() -> None:
    """The scanners give a fact (``LeftAlone``); report/deps words each code."""
    for code in Unmovable:
        assert left_alone(LeftAlone(code, "x")), code
    assert left_alone(LeftAlone(Unmovable.OPERATOR, "<")) == (
        "upper-bounded specifier (<): cannot be rewritten faithfully"
    )
    assert left_alone(LeftAlone(Unmovable.OPERATOR, "~")) == "operator ~: not rewritable"
    assert left_alone(npmspec.classify("github:a/b")) == "git dependency, not a registry range"  # type: ignore[arg-type]
