"""The audit corpus: realistic hooks, scripts and bats suites with planted problems.

Each planted problem is marked on its line with ``# expect: class[, class]``; a line
without a mark must draw no error or warning. The folder says what a file is: ``hooks/``
holds hooks, ``tests/`` bats suites, ``husky/`` POSIX sh, ``scripts/`` plain scripts.
Shared by tests/audit/test_audit_corpus.py and ``python -m bench.audit corpus``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tests.audit.builders import FIXTURES, expected_marks
from tether.audit.findings import Finding
from tether.audit.shell import Target, _lens_analysis
from tether.audit.tools import Toolset

CORPUS = FIXTURES / "corpus"
BLOCKING = ("error", "warning")


@dataclass(frozen=True)
class FileOutcome:
    path: str
    planted: frozenset[tuple[int, str]]
    flagged: frozenset[tuple[int, str]]  # errors and warnings
    findings: tuple[Finding, ...]

    @property
    def detected(self) -> frozenset[tuple[int, str]]:
        return self.planted & self.flagged

    @property
    def missed(self) -> frozenset[tuple[int, str]]:
        return self.planted - self.flagged

    @property
    def false_positives(self) -> frozenset[tuple[int, str]]:
        return self.flagged - self.planted


@dataclass
class CorpusOutcome:
    files: list[FileOutcome] = field(default_factory=list)

    def count(self, name: str) -> int:
        return sum(len(getattr(f, name)) for f in self.files)


def target_for(path: Path) -> Target:
    rel = path.relative_to(CORPUS).as_posix()
    folder = rel.split("/", 1)[0]
    bats = path.suffix == ".bats"
    dialect = "sh" if folder == "husky" else "bash"
    return Target(rel, dialect, bats=bats, hook=folder == "hooks", posix_hook=folder == "husky")


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*") if p.is_file())


def evaluate(tools: Toolset) -> CorpusOutcome:
    outcome = CorpusOutcome()
    for path in corpus_files():
        data = path.read_bytes()
        target = target_for(path)
        found, _facts = _lens_analysis(target, data, tools)
        flagged = frozenset((f.line, f.finding_class) for f in found if f.severity in BLOCKING)
        planted = frozenset(expected_marks(data.decode()))
        outcome.files.append(FileOutcome(target.path, planted, flagged, tuple(found)))
    return outcome
