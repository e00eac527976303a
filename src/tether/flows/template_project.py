"""The flow side of a project copier or cruft generated (``templates/``): its baseline is
the template rendered at the recorded version with the recorded answers, its release the
template rendered at the target with the answers of this run, and its version marker the
tool's own record, rewritten when the update finished. Everything else (the plan, the
merges, the journal, resume and abandon) is the ordinary update's.

The hooks: ``open_project`` binds the record, ``load_baseline`` and ``fetch_release`` come
here for the two sides, ``resolve_target`` for the target, ``prepare_update`` for the
refusals (``check_template_update``), ``_execute`` for migrations and tasks, and
``flows.version_markers`` for the record.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.errors import TetherError
from tether.flows.project import Project, Release, write_ignore_rules
from tether.model.implicit import (
    compile_patterns,
    implicit_manifest,
    implicit_manifest_bytes,
    upstream_name,
)
from tether.model.manifest import FileClass, Manifest
from tether.model.plan import Bucket, FileAction
from tether.templates import COPIER, TemplateBinding
from tether.templates.records import (
    TemplateRecord,
    answers_digest,
    copier_commit_edit,
    cruft_record_bytes,
)
from tether.templates.render import render_record

if TYPE_CHECKING:
    from tether.flows.apply import RunContext
    from tether.flows.notes import Note
    from tether.state.journal import Journal

# The manifest key holding what the render says about its template version.
TEMPLATE_KEY = "template"


def _binding(project: Project) -> TemplateBinding:
    if project.template is None:
        raise TetherError(f"{project.root}: not a template project")
    return project.template


def _present(project: Project, rel: str) -> bool:
    return os.path.lexists(project.path(rel))


def _release_of_render(
    project: Project,
    version: str,
    tree: Path,
    facts: dict[str, Any],
    answers: dict[str, Any],
    baseline: bool = False,
) -> Release:
    """The render as a release: every regular file ``shared``; the record is the marker,
    never merged; what the tool never updates is a sentinel (cruft's ``skip``; copier's
    ``_skip_if_exists`` while the project has the file). A ``_skip_if_exists`` file the
    project no longer has is left out of the baseline, so the release adds it back, as
    copier does."""
    from tether.flows.implicit_release import regular_files

    binding = _binding(project)
    record = binding.record
    manifest = implicit_manifest(
        upstream_name(record.src),
        version,
        regular_files(tree),
        reserved=project.profile.reserved_paths(),
        origin=f"template {record.src} at {version}",
    )
    files = {p: c for p, c in manifest.files.items() if p != record.path}
    never = compile_patterns(list(record.skip), f"{record.path}: skip")
    if_exists = compile_patterns(list(facts.get("skip_if_exists", [])), "_skip_if_exists")
    if baseline:
        files = {
            p: c for p, c in files.items() if _present(project, p) or not if_exists.match_file(p)
        }
    sentinels = sorted(
        p
        for p in files
        if never.match_file(p) or (if_exists.match_file(p) and _present(project, p))
    )
    extra = {
        **manifest.extra,
        TEMPLATE_KEY: {
            "kind": record.kind,
            "src": record.src,
            "ref": version,
            "answers": answers_digest(answers),
            **facts,
        },
    }
    made = Manifest(
        name=manifest.name,
        version=version,
        files={p: FileClass.SHARED for p in files},
        sentinels=tuple(sentinels),
        extra=extra,
    )
    notes = _hooks_note(binding, facts, version)
    return Release(version, tree, record.src, made, implicit_manifest_bytes(made), notes=notes)


def _hooks_note(binding: TemplateBinding, facts: dict[str, Any], version: str) -> tuple[Note, ...]:
    """Say so when a render was made without the hooks its template ships."""
    hooks = facts.get("hooks") or []
    if not hooks or facts.get("hooks_run"):
        return ()
    from tether.flows.notes import HooksNotRun, ProgramsOff

    why = (
        ProgramsOff.NO_PROGRAMS
        if binding.options.no_programs
        else ProgramsOff.DRY_RUN
        if binding.options.dry_run
        else ProgramsOff.UNTRUSTED
    )
    at = version[:12] if binding.kind != COPIER else version
    return (HooksNotRun(binding.record.src, at, tuple(hooks), why),)


def baseline_release(project: Project) -> Release:
    """The template at the recorded version with the recorded answers. The release side is
    rendered after it in the same process (``template_release``), sharing the Jinja
    compilation of every source the two versions have in common (``jinja_sharing``): less
    CPU than a second process started to render beside it, whose start and imports cost
    about what the sharing saves, and on a busy machine less time (docs/performance.md)."""
    binding = _binding(project)
    record = binding.record
    options = binding.options
    tree, facts = render_record(record, record.commit, record.answers, options.trust, options.hooks)
    return _release_of_render(project, record.commit, tree, facts, record.answers, baseline=True)


def template_release(project: Project, version: str) -> Release:
    """The template at ``version`` with the answers of this run (``--data`` applied)."""
    binding = _binding(project)
    answers = binding.release_answers()
    options = binding.options
    tree, facts = render_record(binding.record, version, answers, options.trust, options.hooks)
    return _release_of_render(project, version, tree, facts, answers)


def resolve_template_target(project: Project, wanted: str | None) -> str:
    """The version to update to: ``--to`` (a tag, with or without its ``v``), else the
    newest tag copier would pick (no prerelease), or for cruft the newest commit of the
    followed branch."""
    binding = _binding(project)
    record = binding.record
    if record.kind != COPIER:
        from tether.templates import cruft_render

        commit: str = cruft_render.target_commit(record, wanted)
        return commit
    from tether.templates.copier_render import pep440, template_tags

    tags = template_tags(record.src)
    if wanted:
        for tag in tags:
            if wanted in (tag, tag.removeprefix("v")) or f"v{wanted}" == tag:
                return tag
        return wanted  # a commit or branch: copier accepts any ref
    stable = [t for t in tags if not pep440(t).is_prerelease]
    if not stable:
        raise TetherError(f"template {record.src} has no version tags to update to")
    return stable[-1]


def template_moved(project: Project, latest: str | None) -> bool:
    """Whether the newest template version is past the recorded one: by PEP 440 for copier
    (a ``git describe`` name after its tag counts as that tag's successor), for cruft
    whenever the followed branch names another commit."""
    record = _binding(project).record
    if latest is None or latest == record.commit:
        return False
    if record.kind != COPIER:
        return True
    from tether.templates.copier_render import pep440

    newest, installed = pep440(latest), pep440(record.commit)
    if newest is None or installed is None:
        return True
    return bool(newest > installed)


def answers_change(project: Project) -> bool:
    """``--data`` changes an answer: the release side differs even at the same version."""
    return project.template is not None and bool(project.template.changed_answers())


def check_template_update(
    project: Project,
    baseline_facts: dict[str, Any],
    latest: Release,
    resuming: bool,
    dry_run: bool,
    allow_dirty: bool = False,
) -> list[Note]:
    """What copier refuses, refused the same way (one line each): a downgrade, a template
    whose migrations, tasks or Jinja extensions need ``--trust``, a dirty git tree (tether's
    own resumed writes excepted: the journal vouches for them; ``--allow-dirty`` says the
    person knows, and tether's own check of the files it writes still applies). A dry run
    and ``--no-programs`` run no migration or task, so they need no ``--trust`` for them:
    the notes returned say what is not run."""
    binding = _binding(project)
    record = binding.record
    notes: list[Note] = []
    if record.kind == COPIER:
        _refuse_copier_downgrade(record, latest.version)
        programs_off = binding.options.no_programs or dry_run
        if binding.options.trust and not programs_off:
            # Trusted and run: nothing to refuse or note, so copier is not asked whether a
            # migration lies between the versions (a clone of each): each stage asks it
            # as it runs (``run_update_tasks``).
            _refuse_unless_clean(project, resuming, dry_run, allow_dirty)
            return notes
        facts = latest.manifest.extra.get(TEMPLATE_KEY, {})
        unsafe = _unsafe_features(record, baseline_facts, facts, latest.version)
        programs = [f for f in unsafe if f in ("migrations", "tasks")]
        trusted = binding.options.trust
        if unsafe and not trusted:
            from tether.templates.copier_render import is_trusted

            trusted = is_trusted(record.src)
        if programs and programs_off:
            from tether.flows.notes import ProgramsOff, TemplateProgramsNotRun

            why = ProgramsOff.NO_PROGRAMS if binding.options.no_programs else ProgramsOff.DRY_RUN
            notes.append(
                TemplateProgramsNotRun(
                    record.src,
                    tuple(programs),
                    record.commit,
                    latest.version,
                    why,
                    needs_trust=why is ProgramsOff.DRY_RUN and not trusted,
                )
            )
        elif unsafe and not trusted:
            raise TetherError(
                f"template {record.src} uses {', '.join(unsafe)}, which run programs: "
                "pass --trust if you trust it (nothing was changed)"
            )
    _refuse_unless_clean(project, resuming, dry_run, allow_dirty)
    return notes


def _refuse_unless_clean(
    project: Project, resuming: bool, dry_run: bool, allow_dirty: bool
) -> None:
    if not resuming and not dry_run and not allow_dirty:
        _refuse_dirty_tree(project)
    if not dry_run:
        # tether's folder is a local cache and journal: git never shows it as a change.
        write_ignore_rules(project)


def exclude_as_the_release(project: Project, baseline: Any, latest: Release) -> None:
    """copier renders the old side of an update with the new version's ``_exclude`` too, so
    a path the new version starts to exclude is in neither side and the project's copy is
    left alone (never listed for deletion): the baseline drops what the release's patterns
    exclude."""
    if _binding(project).kind != COPIER:
        return
    facts = latest.manifest.extra.get(TEMPLATE_KEY, {})
    patterns = facts.get("exclude_patterns", facts.get("exclude", []))
    if not patterns:
        return
    from tether.templates.copier_render import exclusion_matcher

    excluded = exclusion_matcher([str(p) for p in patterns])
    for rel in [r for r in baseline.files if r not in latest.manifest.files and excluded(r)]:
        del baseline.files[rel]
        baseline.sentinels.discard(rel)


def _refuse_copier_downgrade(record: TemplateRecord, target: str) -> None:
    from tether.templates.copier_render import pep440

    installed, wanted = pep440(record.commit), pep440(target)
    if installed is not None and wanted is not None and wanted < installed:
        raise TetherError(
            f"{record.path}: refusing to downgrade the template from {record.commit} to "
            f"{target}: an update only moves forward; to go back, revert the commit that "
            f"recorded {record.commit} (find it with 'git log -- {record.path}')"
        )


def _unsafe_features(
    record: TemplateRecord, old: dict[str, Any], new: dict[str, Any], target: str
) -> list[str]:
    features: set[str] = set()
    for facts in (old, new):
        features.update(f for f in facts.get("unsafe", []) if f != "migrations")
    if "migrations" in new.get("unsafe", []):
        from tether.templates.copier_child import migrations_in_range

        if migrations_in_range(record.src, record.commit, target):
            features.add("migrations")
    return sorted(features)


def _refuse_dirty_tree(project: Project) -> None:
    from tether import git

    top = git.work_tree_top(project.root)
    if top is None:
        raise TetherError(
            f"{project.root}: not in a git repository; a template project is updated only "
            "where git can show the changes (git init, commit, then update)"
        )
    prefix = os.path.relpath(project.root, top).replace(os.sep, "/")
    own = ".tether/" if prefix == "." else f"{prefix}/.tether/"
    dirty = [p for p in git.status_changed_paths(top) if not p.startswith(own)]
    if dirty:
        shown = ", ".join(dirty[:3]) + (" …" if len(dirty) > 3 else "")
        raise TetherError(
            f"{project.root}: uncommitted changes ({shown}); commit or stash them first, as "
            "the template's own tool requires"
        )


def baseline_facts(manifest: Manifest) -> dict[str, Any]:
    facts = manifest.extra.get(TEMPLATE_KEY, {})
    return facts if isinstance(facts, dict) else {}


def run_template_stage(
    ctx: RunContext, latest: Release, stage: str
) -> tuple[bool, FileAction | None]:
    """copier's migrations of ``stage`` ("before"/"after", and after them its tasks), run
    only with --trust (``check_template_update`` refused otherwise), each stage at most once
    per run: journaled when it begins and when it finished, so a run killed after it
    resumes without running it again (one killed while it ran runs it again, as a native
    migration is). Returns whether it ran now, and the failed action naming the answers file
    when it failed (the update then stops short of its record)."""
    from tether.state.journal import STEP_TEMPLATE_STAGE_FINISHED, STEP_TEMPLATE_STAGE_STARTED

    project = ctx.project
    binding = _binding(project)
    record = binding.record
    if record.kind != COPIER:
        return False, None
    facts = latest.manifest.extra.get(TEMPLATE_KEY, {})
    stages = [stage] if stage == "before" else ["after", "tasks"]
    declared = set(facts.get("unsafe", []))
    if not declared & {"migrations", "tasks"}:
        return False, None
    if stage in finished_template_stages(ctx.journal, ctx.run_id):
        return False, None
    from tether.templates.copier_render import run_update_tasks

    ctx.journal.append(ctx.run_id, STEP_TEMPLATE_STAGE_STARTED, stage=stage)
    try:
        run_update_tasks(
            project.root,
            record.src,
            record.commit,
            latest.version,
            binding.release_answers(),
            record.path,
            stages,
        )
    except TetherError as error:
        return True, FileAction(record.path, None, Bucket.FAILED, reason=str(error))
    ctx.journal.append(ctx.run_id, STEP_TEMPLATE_STAGE_FINISHED, stage=stage)
    return True, None


def finished_template_stages(journal: Journal, run_id: str) -> set[str]:
    """The stages a run finished (``run_template_stage``)."""
    from tether.state.journal import STEP_TEMPLATE_STAGE_FINISHED

    return {
        str(r.get("stage"))
        for r in journal.records()
        if r.get("run") == run_id and r.get("step") == STEP_TEMPLATE_STAGE_FINISHED
    }


def write_template_record(project: Project, latest: Release, durable: bool) -> list[Path]:
    """The tool's record at the release: copier's answers file is the release's rendering
    of it merged into the project's copy (so comments and order a person added stay), else
    the project's copy with ``_commit`` edited; cruft's ``.cruft.json`` with ``commit``
    (and ``context`` when answers changed) in cruft's own layout."""
    from tether.flows.safety import PathGuard
    from tether.fsio import read_bytes

    binding = _binding(project)
    record = binding.record
    current = read_bytes(project.path(record.path))
    if record.kind == COPIER:
        data = _copier_answers(project, record, latest, current)
    else:
        facts = latest.manifest.extra.get(TEMPLATE_KEY, {})
        data = cruft_record_bytes(current, latest.version, facts.get("context"))
    if data == current:
        return []
    return [PathGuard(project.root).write(record.path, data, durable=durable)]


def _copier_answers(
    project: Project, record: TemplateRecord, latest: Release, current: bytes
) -> bytes:
    from tether.engine.textmerge import merge3

    rendered = latest.read(record.path)
    if rendered is not None:
        old_tree, _facts = render_record(record, record.commit, record.answers)
        try:
            base = (old_tree / record.path).read_bytes()
        except OSError:
            base = None
        if base is not None:
            result = merge3(base, current, rendered)
            if result.conflicts == 0 and not result.binary:
                return result.merged
    edited = copier_commit_edit(current, latest.version)
    if edited is None:
        raise TetherError(
            f"{record.path}: cannot record the new template version {latest.version} "
            "(no single _commit line); edit it by hand"
        )
    return edited


# What a rejected patch leaves beside a file (``git apply --reject``, ``patch``).
LEFTOVER_SUFFIXES = (".rej", ".orig")


def template_leftovers(
    project: Project, baseline: Any, known: list[dict[str, str]]
) -> list[dict[str, str]]:
    """Conflicts no record of tether's names: a file the template renders that still holds
    conflict markers, and the ``*.rej``/``*.orig`` files a rejected patch left (what copier
    and cruft leave behind while their record already names the new version)."""
    from tether.flows.conflicts import conflict_is_unresolved
    from tether.flows.implicit_release import regular_files
    from tether.state.store import ConflictRecord

    seen = {c["path"] for c in known}
    found: list[dict[str, str]] = []
    for rel in sorted(baseline.files):
        if rel in seen or not _present(project, rel):
            continue
        if conflict_is_unresolved(project, rel, ConflictRecord("markers", rel, "")):
            found.append({"path": rel, "style": "markers", "artifact": rel})
    for rel in regular_files(project.root):
        if rel.startswith(".tether/") or not rel.endswith(LEFTOVER_SUFFIXES):
            continue
        path = rel.rsplit(".", 1)[0]
        if path not in seen:
            found.append({"path": path, "style": "leftover", "artifact": rel})
    return found
