"""``tether own PATH…``: the adopter takes shipped files over (``--undo`` gives them back).

A file taken over is the adopter's from then on: no update reads, merges, writes or removes
it, and ``status``, ``check`` and ``diff`` list it as theirs instead of as drift. A deleted
one stays deleted. This is cruft's ``skip`` and copier's ``_skip_if_exists`` from the
adopter's side; the publisher's hand-off (docs/lifecycle.md) is another thing and stays as
it is. The choice is recorded in ``.tether/config.toml`` (``state/config.py``), committed.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from tether.errors import TetherError, UsageError
from tether.flows.baseline import Baseline, load_baseline
from tether.flows.project import Project, open_project, write_ignore_rules
from tether.flows.runtime_paths import check_runtime_paths
from tether.flows.safety import PathGuard
from tether.fsio import NOT_REGULAR, NotRegularFileError, cannot_read, read_regular
from tether.state.config import CONFIG_FILE, render_own
from tether.state.lock import ProjectLock
from tether.templates import TemplateOptions, read_only_options


@dataclass
class OwnReport:
    project_dir: str
    config: str  # the file the choice is recorded in, relative to the project
    undo: bool
    # Taken over by this run (with --undo: given back), and those that already were (were
    # not) so: nothing changed for them.
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    # Of ``changed``, the ones not in the tree: taken over, they stay deleted.
    deleted: list[str] = field(default_factory=list)
    yours: list[str] = field(default_factory=list)  # every path taken over, after the run

    def to_json(self) -> dict[str, object]:
        return {
            "project_dir": self.project_dir,
            "config": self.config,
            "undo": self.undo,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "deleted": self.deleted,
            "yours": self.yours,
        }


def own_paths(
    root: Path,
    paths: list[str],
    undo: bool = False,
    profile: str | None = None,
    template: TemplateOptions | None = None,
) -> OwnReport:
    """Record ``paths`` (files or folders, absolute or relative to ``root``) as taken over,
    or with ``undo`` as the release's again. Every path is checked before anything is
    written: one that names no shipped file is refused (exit 2), nothing recorded."""
    if not paths:
        raise UsageError("name at least one PATH")
    project = open_project(root, profile, read_only_options(template))
    baseline = load_baseline(project)
    current = set(project.yours)
    chosen: list[str] = []
    for arg in paths:
        for rel in _expanded(project, baseline, current, arg, undo):
            if rel not in chosen:
                chosen.append(rel)
    report = OwnReport(str(project.root), CONFIG_FILE, undo)
    for rel in sorted(chosen):
        (report.changed if (rel in current) == undo else report.unchanged).append(rel)
    after = current - set(report.changed) if undo else current | set(report.changed)
    report.yours = sorted(after)
    if not undo:
        report.deleted = [rel for rel in report.changed if not os.path.lexists(project.path(rel))]
    if report.changed:
        with ProjectLock(project.path(project.profile.lock_file), command="own"):
            check_runtime_paths(project)
            _write_config(project, report.yours)
    return report


def _expanded(
    project: Project, baseline: Baseline, current: set[str], arg: str, undo: bool
) -> list[str]:
    """The project paths ``arg`` names: the file itself, or every file under a folder, among
    the shipped files (and, to give back, those taken over)."""
    spelled = os.path.relpath(arg, project.root) if os.path.isabs(arg) else arg
    rel = posixpath.normpath(spelled.replace(os.sep, "/"))
    if rel == ".." or rel.startswith("../"):
        raise UsageError(f"{arg}: outside the project {project.root}")
    if rel in baseline.sentinels:
        raise UsageError(f"{arg}: a sentinel file, yours already; updates never touch it")
    candidates = current if undo else _shippable(project, baseline)
    named = sorted(p for p in candidates if rel in (".", p) or p.startswith(rel + "/"))
    if named:
        return named
    if undo:
        raise UsageError(f"{arg}: not taken over (tether status lists the files that are)")
    raise UsageError(
        f"{arg}: no file of {baseline.upstream} {baseline.version} is at or under this path "
        "(a file the release does not ship is yours already)"
    )


def _shippable(project: Project, baseline: Baseline) -> set[str]:
    """What can be taken over: the installed release's files (sentinels are the adopter's
    already), and the files it dropped that an update left in place."""
    shipped = {p for p in baseline.files if p not in baseline.sentinels}
    state = baseline.state
    if state is not None:
        shipped |= set(state.leftovers)
    return shipped


def _write_config(project: Project, yours: list[str]) -> None:
    target = project.path(CONFIG_FILE)
    try:
        existing: bytes | None = read_regular(target)
    except FileNotFoundError:
        existing = None
    except NotRegularFileError:
        raise TetherError(f"{target}: {NOT_REGULAR}") from None
    except OSError as error:
        raise TetherError(cannot_read(target, error)) from None
    try:
        data = render_own(existing, yours)
    except ValueError as error:
        raise TetherError(f"{target}: not valid TOML ({error})") from None
    PathGuard(project.root).write(CONFIG_FILE, data)
    write_ignore_rules(project)
