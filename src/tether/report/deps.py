"""The deps commands' words: the text of ``deps scan``, ``deps plan`` and ``deps apply``.

Text is always built from the command's JSON document, so both say the same thing. Text is
bounded (a conversation reads it): long lists are cut with a pointer to the run folder,
which keeps the whole document; only the first failures get their log's last lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.report.programs import program_ended, program_failure
from tether.report.runs import failed_section, isolation_lines

if TYPE_CHECKING:
    from datetime import timedelta

    from tether.deps.align import Plan
    from tether.deps.model import LeftAlone, Occurrence, Skipped
    from tether.deps.overrides import BoundOverride
    from tether.deps.plans import Pruned
    from tether.deps.work import Bump, ProjectResult
    from tether.process import Finished

CANCELLED = "Cancelled. No files modified."
LEFT = "left-as-is"  # the kind of an engine surface that is not a simple pin

Doc = dict[str, Any]


LIST_CAP = 20


_HEADLINES = {
    "planned": "planned",
    "cancelled": CANCELLED,
    "nothing": "nothing to update",
    "done": "finished",
    "stopped": "stopped at the first failure",
    "interrupted": "interrupted",
}


# Why there was nothing to apply (the document's ``nothing_to_apply``), each ending the run
# with exit 0 and nothing written.
_NOTHING = {
    "no-updates": "no {level} update for any selected project; nothing to apply",
    "skipped-by-override": "every update that moves is left alone by its override family "
    "(skip-matched); nothing to apply",
    "excluded": "every update was left out; nothing to apply",
}


def render_summary(doc: Doc) -> str:
    if doc["status"] == "cancelled":
        return _HEADLINES["cancelled"]
    headline = _HEADLINES.get(doc["status"], doc["status"])
    reason = doc.get("nothing_to_apply")
    if doc["status"] == "nothing" and reason in _NOTHING:
        headline = _NOTHING[reason].format(level=doc.get("level", ""))
    lines = [f"tether deps {doc.get('level', '')}: {headline}"]
    if doc.get("run_dir"):
        lines[0] += f" (logs in {doc['run_dir']})"
    lines += _applied(doc["applied"])
    lines += failed_section(doc["failed"])
    lines += _list("Pending projects", [_pending_line(p) for p in doc["pending"]])
    lines += _list(
        "Improvements to take up",
        [_improvement_line(i) for i in doc.get("selected_improvements", [])],
    )
    lines += _list(
        "Improvements not selected", [i["title"] for i in doc.get("skipped_improvements", [])]
    )
    lines += _skipped_projects(doc, doc["skipped_path_missing"], doc["skipped_scan_failed"])
    lines += _list("Skipped by user", [_package_line(p) for p in doc["skipped_by_user"]])
    lines += _list(
        "Skipped by conflict policy", [_package_line(p) for p in doc["skipped_by_conflict_policy"]]
    )
    lines += _list(
        "Skipped by override",
        [
            f"{p['name']} ({p['skipped_by'].removeprefix('override:')})"
            for p in doc["skipped_by_override"]
        ],
    )
    lines += _list(
        "Skipped (unsupported range)", [skipped_line(s) for s in doc["skipped_unsupported_range"]]
    )
    lines += _list("Left as is", [skipped_line(s) for s in doc["left_as_is"]])
    lines += _held_back(doc["skipped_by_release_age"])
    lines += _list("Warnings", doc["warnings"])
    lines += _isolation_section(doc["isolation"])
    lines += ["", "## Suggested next steps (not executed)"]
    lines += [f"{i}. {step}" for i, step in enumerate(doc["suggested_next_steps"], 1)]
    return "\n".join(lines)


def _applied(applied: list[Doc]) -> list[str]:
    if not applied:
        return []
    lines = ["", f"## Applied projects ({len(applied)})"]
    for project in applied:
        shared = (
            f" (installed with {project['install_with']})" if project.get("install_with") else ""
        )
        lines.append(f"- {project['name']}{shared}")
        for bump in project["bumps"][:LIST_CAP]:
            lines.append(f"  - {bump_line(bump)}")
        lines += _more(project["bumps"], "  ")
        for override in project["overrides"]:
            lines.append(f"  - override {override['id']}: {override['command']}")
    return lines


def _improvement_line(item: Doc) -> str:
    projects = capped_names(item["projects"]) if item["projects"] else "no project to take it up"
    return f"{item['title']} → {projects}"


def bump_line(bump: Doc) -> str:
    where = f"{bump['source_file']} {bump['location']}"
    return f"{bump['name']} {bump['current_version']} → {bump['target_version']} ({where})"


def _held_back(items: list[Doc]) -> list[str]:
    return _list("Skipped by release age", [held_back_line(h) for h in items])


def held_back_line(item: Doc) -> str:
    where = f"{item['source_file']} {item['location']}"
    head = f"{item['project_name']}: {item['name']} {item['current_version']}"
    kept = f"kept at {item['target_version']}"
    return f"{head} ({where}) {kept}, not {item['held_back_version']}: {item['reason']}"


def skipped_line(item: Doc) -> str:
    where = f"{item['source_file']} {item['location']}"
    head = f"{item['project_name']}: {item['name']} {item['current_version']}"
    return f"{head} ({where}): {item['reason']}"


def _package_line(package: Doc) -> str:
    return f"{package['name']} → {package['proposed_target']}"


def _pending_line(project: Doc) -> str:
    extra = f", {len(project['overrides'])} override(s)" if project["overrides"] else ""
    return f"{project['name']} ({len(project['bumps'])} bump(s){extra})"


def _list(title: str, items: list[str]) -> list[str]:
    if not items:
        return []
    lines = ["", f"## {title} ({len(items)})"]
    lines += [f"- {item}" for item in items[:LIST_CAP]]
    return lines + _more(items, "")


def _more(items: Sequence[Any], indent: str) -> list[str]:
    if len(items) <= LIST_CAP:
        return []
    return [f"{indent}- … and {len(items) - LIST_CAP} more (see the run folder's summary.json)"]


def _isolation_section(isolation: Doc) -> list[str]:
    lines = ["", f"## Isolation: {isolation['requested']}", *isolation_lines(isolation["projects"])]
    if not isolation["projects"]:
        lines.append("- no project was changed")
    return lines


def render_scan(doc: Doc) -> str:
    lines = [f"tether deps scan ({doc['level']})"]
    for project in doc["projects"]:
        if "error" in project:
            continue
        updates = [d for d in project["dependencies"] if d["update"]]
        manager = project["package_manager"] or "no package manager"
        lines += ["", f"## {project['name']} ({manager}): {len(updates)} update(s)"]
        lines += [f"- {bump_line(d)}" for d in updates[:LIST_CAP]]
        lines += _more(updates, "")
        current = len(project["dependencies"]) - len(updates)
        if current:
            lines.append(f"- {current} already at their newest {doc['level']} version")
    lines += _tail_sections(doc)
    return "\n".join(lines)


def render_plan(doc: Doc) -> str:
    """The bump set: one row per package that moves, alphabetical, with the projects and
    locations it moves in; split targets carry the projects that keep their own."""
    rows = sorted(
        (p for p in doc["packages"] if _moving(p)), key=lambda p: (p["name"], p.get("catalog", ""))
    )
    lines = [f"tether deps plan ({doc['level']})", *_policy_lines(doc), ""]
    if doc.get("plan_dir"):
        lines[1:1] = [f"Plan folder: {doc['plan_dir']} (deps notes and deps dossier work there)"]
    lines += ["| package | proposed target | projects | locations |", "|---|---|---|---|"]
    lines += [_plan_row(package) for package in rows]
    if not rows:
        lines.append("| (nothing to update) | | | |")
    if any(_split(p) for p in rows):
        lines.append(f"\n{SPLIT_MARK} {SPLIT_NOTE}")
    lines += _skipped_packages(doc["packages"])
    overrides = doc.get("overrides") or []
    lines += _list("Overrides", [_override_line(item) for item in overrides])
    lines += _tail_sections(doc)
    return "\n".join(lines)


NAMES_CAP = 5  # project names in one cell or line before "+N more"
SPLIT_MARK = "*"
# Why a row names several targets: the level's window (a patch run keeps each project on its
# own major.minor) or the conflict policy keeps some projects on their own.
SPLIT_NOTE = (
    "per-project targets: the level or the conflict policy keeps these projects on their own"
)
_OPERATOR = re.compile(r"^[\^~=<>!]*")


def capped_names(names: Sequence[str], cap: int = NAMES_CAP) -> str:
    unique = list(dict.fromkeys(names))
    shown = ", ".join(unique[:cap])
    return shown + (f" +{len(unique) - cap} more" if len(unique) > cap else "")


def _label(package: Doc) -> str:
    catalog = package.get("catalog")
    return f"{package['name']} (catalog {catalog})" if catalog else str(package["name"])


def _moving_occurrences(package: Doc) -> list[Doc]:
    if package.get("skipped_by"):
        return []
    return [o for o in package["occurrences"] if o["effective_target"] != o["current_version"]]


def _moving(package: Doc) -> bool:
    return bool(_moving_occurrences(package))


def _version(shown: str) -> str:
    return str(_OPERATOR.sub("", shown)).removeprefix("v")


def _same_target(shown: str, proposed: str) -> bool:
    """``shown`` writes ``proposed`` (any operator, ``v`` or not, at its own precision: an
    engine pin ``22`` next to ``22.16.0`` is the same target, not a split)."""
    version = _version(shown)
    parts = version.split(".")
    return version == proposed or ".".join(proposed.split(".")[: len(parts)]) == version


def _targets_by_version(package: Doc) -> dict[str, list[Doc]]:
    """Occurrences at the proposed version (any operator, any precision) under "", the rest
    by what they write."""
    proposed = _version(package["proposed_target"])
    groups: dict[str, list[Doc]] = {}
    for occurrence in _moving_occurrences(package):
        shown = occurrence["effective_target"]
        key = "" if _same_target(shown, proposed) else shown
        groups.setdefault(key, []).append(occurrence)
    return groups


def _split(package: Doc) -> bool:
    return len(_targets_by_version(package)) > 1


def _plan_row(package: Doc) -> str:
    moving = _moving_occurrences(package)
    projects = capped_names([o["project_name"] for o in moving])
    locations = ", ".join(dict.fromkeys(o["location"] for o in moving))
    name = _label(package) + (f" {SPLIT_MARK}" if _split(package) else "")
    return f"| {name} | {_target_cell(package)} | {projects} | {locations} |"


def _target_cell(package: Doc) -> str:
    """The proposed target first; every other version with the projects that take it."""
    groups = _targets_by_version(package)
    main = groups.pop("", None)
    cells = [package["proposed_target"]] if main is not None else []
    for shown, members in groups.items():
        cells.append(f"{shown} ({capped_names([o['project_name'] for o in members])})")
    cell = " / ".join(cells)
    return cell + (f" (override {package['override']})" if package.get("override") else "")


def _policy_lines(doc: Doc) -> list[str]:
    conflicts = [p for p in doc["packages"] if p["conflict"]]
    head = f"Conflict policy: {doc['conflict_policy']}"
    if not conflicts:
        return [f"{head} (no conflicting package)"]
    lines = [f"{head}, for {len(conflicts)} conflicting package(s):"]
    for package in sorted(conflicts, key=lambda p: (p["name"], p.get("catalog", ""))):
        lines.append(f"- {_conflict_line(package)}")
    return lines


def _conflict_line(package: Doc) -> str:
    occurrences = package["occurrences"]
    proposed = _version(package["proposed_target"])
    lower = [o["project_name"] for o in occurrences if _version(o["target_version"]) != proposed]
    text = f"{_label(package)} in {capped_names([o['project_name'] for o in occurrences])}: "
    text += f"own target below {package['proposed_target']} in {capped_names(lower)}"
    return text + (" (skipped)" if package.get("skipped_by") == "conflict-policy" else "")


def _skipped_packages(packages: list[Doc]) -> list[str]:
    def line(package: Doc) -> str:
        names = capped_names([o["project_name"] for o in package["occurrences"]])
        return f"{_label(package)} → {package['proposed_target']} (projects {names})"

    def of(reason: str) -> list[str]:
        chosen = [p for p in packages if (p.get("skipped_by") or "").startswith(reason)]
        return [line(p) for p in sorted(chosen, key=lambda p: (p["name"], p.get("catalog", "")))]

    lines = _list("Skipped by conflict policy", of("conflict-policy"))
    lines += _list("Skipped by user", of("user"))
    return lines + _list("Skipped by override", of("override:"))


def _override_line(item: Doc) -> str:
    packages = ", ".join(item["packages"])
    projects = capped_names(item["projects"])
    head = f"{item['id']} [{item['decision']}]: {item['command']}"
    return f"{head} (packages {packages}; projects {projects})"


def _skipped_projects(doc: Doc, path_missing: list[Doc], scan_failed: list[Doc]) -> list[str]:
    """The projects a step left out, and why (a plan and an apply summary name the last two
    lists differently)."""
    lines = _list(
        "Skipped (isolation not possible)",
        [f"{m['name']}: {m['reason']}" for m in doc.get("skipped_isolation", [])],
    )
    missing = [f"{m['name']}: {m['project_dir']}" for m in path_missing]
    lines += _list("Skipped (path missing)", missing)
    lines += _list("Skipped (scan-failed)", [f"{m['name']}: {m['error']}" for m in scan_failed])
    return lines


def _tail_sections(doc: Doc) -> list[str]:
    lines: list[str] = []
    lines += _skipped_projects(doc, doc["skipped_path_missing"], doc["scan_failed"])
    lines += _list(
        "Skipped (unsupported range)",
        [skipped_line(s) for s in doc["skipped"] if s["kind"] == "unsupported-range"],
    )
    lines += _list("Left as is", [skipped_line(s) for s in doc["skipped"] if s["kind"] == LEFT])
    lines += _held_back(doc["skipped_by_release_age"])
    lines += _list("Warnings", doc["warnings"])
    return lines


# --- what a person reads before a question of ``deps apply`` ------------------------------


def conflict_lines(plan: Plan) -> list[str]:
    """What the person reads before choosing one policy for every conflicting package."""
    lines = []
    for package in plan.conflicts:
        targets = ", ".join(
            f"{p.resolved.occurrence.project} {p.resolved.target_declared.shown}"
            for p in package.occurrences
        )
        lines.append(f"conflict: {package.label}: highest {package.proposed_version}; {targets}")
    return lines


def override_lines(override: BoundOverride) -> list[str]:
    """What a family's decision is about: its notes, the packages it matched in every
    project, the projects, the command and where to read more."""
    entry = override.entry
    lines = [
        f"Override {entry.id}: {entry.notes or 'a family moved by its own command'}",
        f"  matched packages (in every project): {', '.join(p.label for p in override.packages)}",
        f"  affected projects: {', '.join(override.projects)}",
        f"  command: {override.to_json()['command']}",
    ]
    if entry.reference:
        lines.append(f"  reference: {entry.reference}")
    return lines


def apply_digest(index: int, count: int, result: ProjectResult) -> str:
    """The line a person reads once a project of ``deps apply`` is done."""
    head = f"[{index + 1}/{count}] {result.work.name}:"
    if result.state == "skipped" and result.isolation is not None:
        return f"{head} skipped, {result.isolation.note}"
    if result.state == "failed":
        return (
            f"{head} FAILED at {result.failed_step} (exit {result.exit_code}): {result.error}; "
            f"log {result.log}"
        )
    parts = [f"{len(result.work.bumps)} bump(s) in {len(result.files)} file(s)"]
    parts += [f"{step.name} ok ({step.seconds:.1f}s)" for step in result.steps]
    return f"{head} " + ", ".join(parts)


def apply_next_steps(doc: Doc, unlocked_python: Sequence[str] = ()) -> list[str]:
    """The suggested next steps of a ``deps apply`` document (never run by tether);
    ``unlocked_python``: applied projects whose Python environment or lock is the person's
    to refresh."""
    steps = []
    applied = [p["name"] for p in doc["applied"]]
    if applied:
        steps.append("run the tests, lint and type checks of " + ", ".join(applied))
        steps.append(
            "review the changes (git diff) and commit project by project: tether never "
            "commits or pushes; a commit on the run's branch may meet the repository's "
            "commit hooks, so run its lint and build first"
        )
    if doc.get("install") is False and applied:
        steps.append("run each applied project's install: --no-install skipped it")
    if doc["failed"]:
        first = doc["failed"][0]
        steps.append(f"read {first['log']}, fix {first['name']}, then run the same command again")
    if doc["skipped_isolation"]:
        names = ",".join(p["name"] for p in doc["skipped_isolation"])
        steps.append(
            f"the isolation asked for was not possible for {names}: fix the reason shown, "
            "or run again with --isolate none to change them in place"
        )
    if doc["pending"]:
        names = ",".join(p["name"] for p in doc["pending"])
        steps.append(f"apply the pending projects: tether deps apply --projects {names} …")
    if unlocked_python:
        steps.append("refresh the Python environment or lock of " + ", ".join(unlocked_python))
    if doc["skipped_unsupported_range"]:
        steps.append("move the skipped ranges by hand, or write them as ^x.y.z / ~x.y.z / x.y.z")
    if not steps:
        steps.append("nothing to do")
    return steps


def improvement_step(doc: Doc) -> list[str]:
    selected = [i for i in doc["selected_improvements"] if i["projects"]]
    if not selected:
        return []
    return [
        f"take up the {len(selected)} selected improvement(s) of the dossier in "
        + ", ".join(dict.fromkeys(p for i in selected for p in i["projects"]))
        + " (tether changes versions only)"
    ]


# --- the notes of a worktree's package-manager configuration (``tether.deps.carry``) -------


def config_carried(carried: Sequence[str]) -> str:
    """The isolation note once git-ignored configuration was copied into a worktree."""
    if not carried:
        return ""
    return f"carried {', '.join(carried)} (git-ignored) into the worktree"


def config_not_carried(refused: Sequence[str]) -> str:
    """Why worktree isolation is not possible when configuration cannot be carried."""
    reason = (
        f"{', '.join(refused)} is in the checkout but neither committed nor "
        "git-ignored, so the install in the worktree could not read it without it "
        "becoming a file to commit there"
    )
    return f"worktree isolation not possible: {reason}"


# --- warnings a plan carries ----------------------------------------------------------------


def overrides_default_notice(path: Path) -> str:
    """Override families were read from the default place, which a person may not know."""
    return f"override families read from {path} (the default place; --overrides FILE names another)"


def pruned_notice(pruned: Pruned, stale_days: int) -> str:
    """A plan folder unused for over ``stale_days`` days, removed (or why it was not)."""
    day = pruned.last_used.date().isoformat()
    if pruned.error:
        return f"plan folder {pruned.path} unused since {day}, not removed: {pruned.error}"
    return f"removed plan folder {pruned.path}: unused since {day} (over {stale_days} days)"


# --- warnings of a scan (each in the document's ``warnings``) ------------------------------


def not_fetched_warning(kind: str, name: str, ecosystem: str, where: str, users: list[str]) -> str:
    """A package its registry does not know (``unknown-package``) or could not be asked for."""
    what = "unknown package" if kind == "unknown-package" else "could not fetch"
    return f"{what} {name} ({ecosystem} registry {where}; used by {', '.join(users)})"


def managers_mixed_warning(counts: dict[str, int]) -> str:
    """The selected projects use more than one package manager (how many each)."""
    shown = ", ".join(f"{pm} ({n})" for pm, n in counts.items())
    return f"mixed package managers across projects: {shown}"


def lockfiles_mixed_warning(project: str, locked: Sequence[str]) -> str:
    return f"{project}: mixed package managers: lockfiles of {', '.join(locked)}"


def manager_not_locked_warning(project: str, declared: str, lockfile_manager: str) -> str:
    return f"{project}: packageManager names {declared} but the lockfile is {lockfile_manager}'s"


def catalog_missing_warning(project: str, where: str, name: str, catalog: str) -> str:
    """A ``catalog:`` reference no catalog resolves."""
    ref = "catalog:" if catalog == "default" else f"catalog:{catalog}"
    return f"{project}: {where} names {name} as {ref!r}, but no catalog holds it"


def no_engine_target_warning(tool: str, reason: str) -> str:
    return f"no target for {tool}: {reason}"


def pinned_apart_warning(
    project: str, tool: str, pinned: Sequence[tuple[str, str]], target: str | None
) -> str:
    """One tool pinned differently within one project: (pin, file) each."""
    shown = ", ".join(f"{pin} ({source})" for pin, source in pinned)
    then = f"each converges to {target}" if target else "no target to converge to"
    return f"{project}: {tool} is pinned differently within the project: {shown}; {then}"


def pinned_above_warning(occurrence: Occurrence, target: str, converge: bool) -> str:
    """A pin newer than the run's target: kept, or moved down when asked to converge."""
    then = "moved to it (--converge-engines)" if converge else "left as it is"
    return (
        f"{occurrence.project}: {occurrence.name} {occurrence.declared.shown} "
        f"({occurrence.locus.source_file}) is newer than the run's target {target}; {then}"
    )


def yarn_migration_warning(occurrence: Occurrence, target: str) -> str:
    return (
        f"{occurrence.project}: yarn {occurrence.declared.shown} → {target} is a "
        "migration from yarn 1, not a version bump; left as it is"
    )


def hash_dropped_warning(project: str, new: str) -> str:
    """``packageManager``'s integrity hash names one version; moving it drops the hash."""
    return (
        f"{project}: packageManager becomes {new} without its integrity hash; "
        f"`corepack use {new}` adds it back"
    )


def override_dropped_warning(entry: str, source: str | None, fallback: str | None) -> str:
    """An override family whose ``{version}`` nothing resolves: its packages go generic."""
    return (
        f"override {entry} dropped: no version for {{version}} from {source}"
        + (f" or {fallback}" if fallback else "")
        + "; its packages get the generic bump"
    )


def program_failure_line(command: str, finished: Finished) -> str:
    """A failed install's or override command's ``error``: ``npm install exited with 1``;
    ``npm install timed out after 5 s (… sets it); its process group was stopped``."""
    if finished.timed_out:
        return program_failure(finished, command)
    return f"{command} exited with {finished.code()}"


def program_log_line(finished: Finished) -> str | None:
    """The line a project's log gets when its program could not start or timed out (what
    it printed is the log's lines before), or None."""
    program = finished.program
    if finished.not_found:
        return f"{program}: not found on PATH"
    if not finished.started:
        return f"{program}: {finished.error}"
    if finished.timed_out:
        return f"{program}: {program_ended(finished)}"
    return None


# --- one project's part of a deps apply run: its log in the run folder, its ``error`` --------

EDIT_SECTION = "== edit"
INTERRUPTED = "interrupted"
# The manifests of a project whose install did not finish hold the new versions already.
INSTALL_PENDING = "Manifests already bumped; install pending"


def project_log_header(name: str, root: Path) -> str:
    return f"project {name} ({root})"


def result_log_line(state: str, *, install_owed: bool = False) -> str:
    """How the project ended (``skipped`` or ``applied``), the log's last line."""
    if state == "skipped":
        return "== result: skipped, nothing written"
    if install_owed:
        return "== result: applied, install owed until it runs"
    return "== result: applied"


def install_with_log_line(tool: str) -> str:
    """A workspace member whose install the workspace's root runs."""
    return f"== install: with {tool} (one install for the workspace)"


def bump_log_line(bump: Bump) -> str:
    where = f"{bump.change.locus.source_file} {bump.change.locus.location}"
    return f"  {bump.package} {bump.current} → {bump.target} ({where})"


def step_log_line(step: str, command: str) -> str:
    return f"== {step}: {command}"


def exit_log_line(step: str, code: int) -> str:
    return f"== {step} exit code {code}"


def failed_log_line(step: str, error: str) -> str:
    return f"== failed at {step}: {error}"


def lock_failure(root: Path, error: Exception) -> str:
    """The project's ``error`` when another run holds its lock (the lock's own words)."""
    return f"{root}: {error}"


def install_pending(why: str) -> str:
    """The ``error`` of a project whose manifests were written and whose install did not
    finish (``why``: how it ended, or ``interrupted``)."""
    return f"{INSTALL_PENDING} ({why})"


# --- what a scan could not read --------------------------------------------------------------

NO_RUNTIME_VERSION = (
    "no runtime version found (package.json, .nvmrc, .node-version, .tool-versions, "
    ".bun-version, mise.toml, Dockerfiles, CI workflows)"
)
NO_MANIFEST = "no package.json, pnpm-workspace.yaml or pyproject.toml"


def no_registry(ecosystem: str) -> str:
    """A package's ``error`` when no registry of its ecosystem is configured."""
    return f"no registry configured for {ecosystem}"


# --- why deps leaves a declaration as it is (a ``Skipped``'s ``reason``) ----------------------

_FAITHFULLY = "cannot be rewritten faithfully"
_FULL_VERSION = "write a full version for tether to move it"
# Python's operators tether does not move, each with what it says (any other: not rewritable).
_OPERATORS = {
    "<": f"upper-bounded specifier (<): {_FAITHFULLY}",
    "<=": f"upper-bounded specifier (<=): {_FAITHFULLY}",
    ">": f"open specifier (>): {_FAITHFULLY}",
    "!=": f"exclusion (!=): {_FAITHFULLY}",
    "===": f"arbitrary equality (===): {_FAITHFULLY}",
}


def left_alone(why: LeftAlone) -> str:
    """Why a declaration is left as it is, in the words a plan and its reports give."""
    code = str(why.code)  # report/ knows deps' codes by their values (it sits below deps/)
    if code == "reference":
        return f"{why.detail}, not a registry range"
    if code == "operator":
        return _OPERATORS.get(why.detail, f"operator {why.detail}: not rewritable")
    if code == "not-plain-version":
        return f"{why.detail!r} is not a plain version: left as is"
    return _LEFT_ALONE[code]


_LEFT_ALONE = {
    "not-a-string": "not a string",
    "union-range": "union range (||): more than one range, cannot be rewritten as one",
    "hyphen-range": f"hyphen range (a - b): {_FAITHFULLY}",
    "upper-bounded-range": f"upper-bounded range (<): {_FAITHFULLY}",
    "partial-version": f"x-range or partial version: {_FULL_VERSION}",
    "open-range": f"open range (>, >=): {_FAITHFULLY}",
    "not-semver": "not a semver range (a dist-tag or a typo)",
    "compound-range": f"compound range: {_FAITHFULLY}",
    "not-pep508": "not a valid PEP 508 requirement",
    "direct-reference": "direct reference (name @ url), not a registry version",
    "no-specifier": "no version specifier: nothing to move",
    "upper-bounded-set": f"upper-bounded specifier set (<): {_FAITHFULLY}",
    "several-specifiers": f"several specifiers: {_FAITHFULLY}",
    "wildcard": f"wildcard (==X.*): {_FULL_VERSION}",
    "not-plain-release": "not a plain release version",
    "specifier-not-found": "specifier not found in the requirement text",
    "manager-not-name-at-version": "packageManager is not name@version",
    "manager-not-full-version": "packageManager version is not a full semver version",
    "engine-alias": "an alias, not a version: it moves by itself",
    "engine-not-simple": f"not a single version or simple range: {_FAITHFULLY}",
    "several-on-a-line": "several versions on one line: cannot be rewritten",
    "published-engines": "a published package's engines support range is never changed",
    "expression": "an expression or a variable: left as is",
    "digest": "an image pinned by digest: left as is",
    "matrix": "a list of versions (a matrix): left as is",
}


# --- a package the registries did not answer for ---------------------------------------------

_REGISTRY_ERROR = "registry error: "


def not_fetched_reason(unknown: bool, ecosystem: str, error: str | None) -> str:
    """A ``Skipped``'s reason for a package its registry does not know or did not answer."""
    if unknown:
        return f"not found in the {ecosystem} registry"
    return f"{_REGISTRY_ERROR}{error}"


def unreachable_line(failed: Sequence[Skipped]) -> str:
    """One line naming the packages a registry could not be asked for, and why."""
    names = list(dict.fromkeys(s.name for s in failed))
    shown = ", ".join(names[:3]) + (f" +{len(names) - 3} more" if len(names) > 3 else "")
    reason = failed[0].reason.removeprefix(_REGISTRY_ERROR)
    return (
        f"the {failed[0].ecosystem} registry could not be asked for {len(names)} package(s) "
        f"({shown}): {reason}"
    )


# --- why a bump's notes are incomplete (``deps notes``: a bump's ``unavailable``) -------------

NO_REGISTRY_METADATA = "the plan folder holds no registry metadata for it (deps plan keeps it)"
NO_REPOSITORY_NAMED = "release pages: the registry names no repository"
_RATE_HINT = " (GitHub's rate limit? $GITHUB_TOKEN raises it)"


def not_on_github(repository: str | None) -> str:
    return f"release pages: {repository} is not on GitHub (only GitHub's are read)"


def pages_unread(slug: str, transient: bool, problem: str) -> str:
    """GitHub's release pages of ``slug`` did not answer (``transient``) or not readably."""
    what = "unreachable" if transient else "unreadable"
    hint = _RATE_HINT if problem.endswith(("HTTP 403", "HTTP 429")) else ""
    return f"release pages of {slug} {what}: {problem}{hint}"


def no_repository_on_github(slug: str) -> str:
    return f"release pages: no repository {slug} on GitHub"


def changelog_unread(problem: str) -> str:
    return f"changelog: {problem}"


def no_release_notes(from_version: str, to_version: str) -> str:
    return f"no GitHub release and no CHANGELOG.md between {from_version} and {to_version}"


def changelog_unreadable(path: str, error: Exception) -> str:
    return f"changelog {path}: {error}"


def changelog_without_entry(path: str, from_version: str, to_version: str) -> str:
    return f"changelog {path} has no entry between {from_version} and {to_version}"


# --- a plan, its release gates and its folder ------------------------------------------------


def moved_line(project: str, package: str, current: str, was: str | None, will: str | None) -> str:
    """How a package of the plan made now moves differently from the one a folder keeps."""
    if was is None:
        return f"{project}: {package} {current} now moves to {will}"
    if will is None:
        return f"{project}: {package} {current} no longer moves to {was}"
    return f"{project}: {package} {current} now moves to {will}, not {was}"


def gate_ignored(where: str, setting: str, value: object, unit: str | None) -> str:
    """A release-age setting that is not a number of ``unit`` (None: not a duration),
    which is ignored."""
    wanted = f"a number of {unit}" if unit else "a duration"
    return f"{where}: {setting} {value!r} is not {wanted}; ignored"


def held_back_reason(version: str, age: timedelta | None, setting: str, asked: timedelta) -> str:
    """Why a release is held back by a release-age gate (``age`` None: no publish time)."""
    if age is None:
        return f"{version} has no publish time; {setting} needs its age known"
    return f"{version} is {_span(age)} old; {setting} asks {_span(asked)}"


def _span(age: timedelta) -> str:
    """A readable age: whole days from two days up, else hours, else minutes."""
    minutes = max(0, int(age.total_seconds() // 60))
    if minutes >= 2 * 24 * 60:
        return f"{minutes // (24 * 60)}d"
    if minutes >= 120:
        return f"{minutes // 60}h"
    return f"{minutes}m"


def newest_plan_folder(folder: Path, level: str | None) -> str:
    """The notice of a run that picked the plan folder itself."""
    return f"plan folder {folder}: the newest for {level} (--plan-dir DIR names another)"
