"""``tether check``: what ``status`` finds, judged by what the team decided fails the check.

Every finding is listed with its next step (the command that shows it, keeps it or finishes
it, worded by ``report/status_document.check_next_steps``); which kinds of finding fail
(exit 3) is decided in one place: ``--fail-on``, else the project's ``[check] fail_on``
(``.tether/config.toml``), else the default below; ``--strict`` adds every kind that needs
no network, ``--check-latest`` a newer release (docs/cli.md, "tether check").
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tether.errors import TetherError, UsageError
from tether.flows.project import open_project
from tether.flows.status import StatusReport, project_status
from tether.state.config import CONFIG_FILE
from tether.templates import TemplateOptions, read_only_options
from tether.valueclass import field, valueclass

# Every kind of finding, in the order they are reported.
RUN_IN_PROGRESS = "run-in-progress"
UNFINISHED_UPDATE = "unfinished-update"
OWNED_DRIFT = "owned-drift"
UNRESOLVED_CONFLICTS = "unresolved-conflicts"
ACTION_REQUIRED = "action-required"
NOT_REGULAR_FILES = "not-regular-files"
LEFTOVERS = "leftovers"
UPDATE_AVAILABLE = "update-available"
CHECK_REASONS = (
    RUN_IN_PROGRESS,
    UNFINISHED_UPDATE,
    OWNED_DRIFT,
    UNRESOLVED_CONFLICTS,
    ACTION_REQUIRED,
    NOT_REGULAR_FILES,
    LEFTOVERS,
    UPDATE_AVAILABLE,
)
# What fails without a word from the team: what an update must not run over, or a person
# must settle. Leftovers are listed but pass (``--strict`` fails on them); a newer release
# is looked for only when asked (it needs the source, often the network).
DEFAULT_FAIL_ON = (
    RUN_IN_PROGRESS,
    UNFINISHED_UPDATE,
    OWNED_DRIFT,
    UNRESOLVED_CONFLICTS,
    ACTION_REQUIRED,
    NOT_REGULAR_FILES,
)
STRICT = tuple(r for r in CHECK_REASONS if r != UPDATE_AVAILABLE)


@valueclass(frozen=True)
class Finding:
    """One kind of finding about a path or the project; its next steps are worded from the
    status's facts by ``report/status_document.check_next_steps``."""

    reason: str
    path: str | None  # None: about the project (a run, a newer release, an action item)
    fails: bool
    migration: str | None = None  # an action item's: the migration that left it

    def to_json(self, next_steps: Sequence[str] = ()) -> dict[str, object]:
        return {
            "reason": self.reason,
            "path": self.path,
            "next_steps": list(next_steps),
            "fails": self.fails,
        }


@valueclass()
class CheckReport:
    status: StatusReport
    fail_on: tuple[str, ...]
    # Where the set came from: "--fail-on", the config file, or "default" (with --strict or
    # --check-latest added, named).
    fail_on_from: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def reasons(self) -> list[str]:
        """The kinds of finding that fail the check, in the report's order."""
        failing = {f.reason for f in self.findings if f.fails}
        return [r for r in CHECK_REASONS if r in failing]

    @property
    def passing(self) -> list[str]:
        """Kinds found that do not fail the check (listed all the same)."""
        found = {f.reason for f in self.findings if not f.fails}
        return [r for r in CHECK_REASONS if r in found]

    def to_json(self) -> dict[str, object]:
        """The facts; report/status_document.check_document adds the next steps."""
        return {
            "ok": not self.reasons,
            "reasons": self.reasons,
            "fail_on": list(self.fail_on),
            "fail_on_from": self.fail_on_from,
            "findings": [f.to_json() for f in self.findings],
            **self.status.to_json(),
        }


def chosen_fail_on(
    given: Sequence[str] | None,
    configured: Sequence[str] | None,
    strict: bool,
    check_latest: bool,
) -> tuple[tuple[str, ...], str]:
    """What fails the check, and where that was decided. ``given``: ``--fail-on`` (wins);
    ``configured``: the project's ``[check] fail_on``."""
    if given is not None:
        chosen, origin = list(given), "--fail-on"
    elif configured is not None:
        chosen, origin = list(configured), CONFIG_FILE
    else:
        chosen, origin = list(DEFAULT_FAIL_ON), "default"
    extra = [*(STRICT if strict else ()), *((UPDATE_AVAILABLE,) if check_latest else ())]
    if extra:
        origin += " + " + " + ".join(
            flag for flag, on in (("--strict", strict), ("--check-latest", check_latest)) if on
        )
    wanted = set(chosen) | set(extra)
    return tuple(r for r in CHECK_REASONS if r in wanted), origin


def _unknown(names: Sequence[str] | None) -> list[str]:
    return [n for n in names or () if n not in CHECK_REASONS]


def check_project(
    root: Path,
    *,
    fail_on: Sequence[str] | None = None,
    strict: bool = False,
    check_latest: bool = False,
    profile: str | None = None,
    source: str | None = None,
    no_regions: bool = False,
    template: TemplateOptions | None = None,
) -> CheckReport:
    known = ", ".join(CHECK_REASONS)
    bad = _unknown(fail_on)
    if bad:
        raise UsageError(f"--fail-on: unknown {', '.join(map(repr, bad))} (known: {known})")
    project = open_project(root, profile, read_only_options(template))
    configured = project.config.fail_on
    bad = _unknown(configured)
    if bad:
        raise TetherError(
            f"{project.path(CONFIG_FILE)}: [check] fail_on: unknown {', '.join(map(repr, bad))} "
            f"(known: {known})"
        )
    chosen, origin = chosen_fail_on(fail_on, configured, strict, check_latest)
    status = project_status(
        root,
        profile,
        source,
        check_latest=UPDATE_AVAILABLE in chosen,
        no_regions=no_regions,
        template=template,
    )
    return CheckReport(status, chosen, origin, findings_of(status, chosen))


def findings_of(status: StatusReport, fail_on: Sequence[str]) -> list[Finding]:
    """Every finding of ``status``, in the report's order, marked failing or not."""
    found: list[tuple[str, str | None, str | None]] = []
    if status.running is not None:
        found.append((RUN_IN_PROGRESS, None, None))
    if status.unfinished is not None:
        found.append((UNFINISHED_UPDATE, None, None))
    found += [(OWNED_DRIFT, rel, None) for rel in [*status.modified_owned, *status.deleted_owned]]
    found += [(UNRESOLVED_CONFLICTS, conflict["path"], None) for conflict in status.conflicts]
    found += [(ACTION_REQUIRED, None, str(item.get("id"))) for item in status.action_items]
    found += [(NOT_REGULAR_FILES, rel, None) for rel in status.not_regular]
    found += [(LEFTOVERS, rel, None) for rel in status.leftovers]
    if status.update_available:
        found.append((UPDATE_AVAILABLE, None, None))
    wanted = set(fail_on)
    return [Finding(reason, path, reason in wanted, migration) for reason, path, migration in found]
