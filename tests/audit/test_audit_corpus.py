"""The lenses over a corpus of realistic hooks, scripts and bats suites: every planted
problem is found at its line with its class, and nothing else draws an error or warning."""

from __future__ import annotations

import pytest

from tests.audit.corpus import CORPUS, CorpusOutcome, corpus_files, evaluate, target_for
from tether.audit.tools import Toolset, default_tools


@pytest.fixture(scope="module")
def tools() -> Toolset:
    found = default_tools()
    if not found.shfmt.available:
        pytest.skip("shfmt is not installed (pip install shfmt-py)")
    return found


@pytest.fixture(scope="module")
def outcome(tools: Toolset) -> CorpusOutcome:
    """The lenses over the whole corpus, once per module: each test reads what they found
    (every file's findings, 0.25 s, were computed again for each of the 17 tests)."""
    return evaluate(tools)


@pytest.mark.parametrize("name", [p.relative_to(CORPUS).as_posix() for p in corpus_files()])
def test_each_corpus_file_is_flagged_exactly_at_its_planted_lines(
    outcome: CorpusOutcome, name: str
) -> None:
    found = next(f for f in outcome.files if f.path == name)
    assert sorted(found.missed) == []
    assert sorted(found.false_positives) == []


def test_the_corpus_plants_every_kind_and_keeps_clean_files(outcome: CorpusOutcome) -> None:
    planted = {cls for f in outcome.files for _, cls in f.planted}
    for prefix in ("hook/", "bats/", "bash32/", "portability/", "paths/"):
        assert any(cls.startswith(prefix) for cls in planted), prefix
    clean = [f.path for f in outcome.files if not f.planted]
    assert len(clean) >= 4
    assert outcome.count("planted") >= 30


def test_a_gnu_form_in_the_linux_arm_is_only_a_suggestion(outcome: CorpusOutcome) -> None:
    vendor = next(f for f in outcome.files if f.path == "scripts/sync-vendor.sh")
    suggestions = {(f.line, f.finding_class) for f in vendor.findings if f.severity == "suggestion"}
    lines = (CORPUS / "scripts" / "sync-vendor.sh").read_text().splitlines()
    stat_c = next(i for i, text in enumerate(lines, 1) if "stat -c" in text)
    assert (stat_c, "portability/stat-format") in suggestions


def test_targets_follow_the_corpus_folders() -> None:
    hook = target_for(CORPUS / "hooks" / "post-edit-format.sh")
    suite = target_for(CORPUS / "tests" / "cut-release.bats")
    husky = target_for(CORPUS / "husky" / "pre-commit")
    assert (hook.hook, suite.bats, husky.dialect) == (True, True, "sh")
