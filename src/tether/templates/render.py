"""One render of a template record at a version with a set of answers, through the render
cache (the renderers change the working folder of the process they run in, so two renders in
one process run one after the other: ``render_cache.ONE_RENDER``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.errors import TetherError
from tether.templates import HOOKS_PREVIEW, HOOKS_REFUSE, HOOKS_RUN, HOOKS_SKIP
from tether.templates.records import COPIER, TemplateRecord, answers_digest
from tether.templates.render_cache import (
    TREE,
    cached_render,
    read_facts,
    render_key,
    renders_home,
)

if TYPE_CHECKING:
    pass


def _copier_key(record: TemplateRecord, ref: str, answers: dict[str, Any]) -> str:
    from tether.templates import copier_render as renderer

    source = renderer.location(record.src)
    return render_key(
        source, ref, _tag_commit(source, ref), answers_digest(answers), renderer.renderer_version()
    )


def _cruft_key(record: TemplateRecord, ref: str, answers: dict[str, Any], hooks_run: bool) -> str:
    """A render with the template's hooks run and one without are two entries (they may
    differ: a hook writes and removes files)."""
    from tether.templates import cruft_render

    return render_key(
        record.src,
        ref,
        record.directory or "",
        answers_digest(answers),
        cruft_render.renderer_version(),
        *(["hooks-run"] if hooks_run else []),
    )


def _tag_commit(source: str, ref: str) -> str:
    """The commit a tag names, so a tag moved upstream is rendered again; "" when the ref
    is no tag the template lists (a ``git describe`` name holds its commit already)."""
    from tether.templates.copier_render import remote_commits

    try:
        commits = remote_commits(source)
    except TetherError:
        return ""
    return commits.get(f"refs/tags/{ref}", "")


def render_key_of(
    record: TemplateRecord, ref: str, answers: dict[str, Any], hooks: str = HOOKS_REFUSE
) -> str:
    if record.kind == COPIER:
        return _copier_key(record, ref, answers)
    return _cruft_key(record, ref, answers, hooks == HOOKS_RUN)


def _usable_entry(
    record: TemplateRecord, ref: str, answers: dict[str, Any], hooks: str
) -> str | None:
    """The cached cruft render this command may use without rendering: the one its hook
    policy names, or the other one when it says the template ships no hook (both are then
    the same tree), or, where the command runs no template program (``HOOKS_PREVIEW``), one
    an earlier run rendered with the hooks: nothing runs now, and it is what an update
    renders."""
    wanted = render_key_of(record, ref, answers, hooks)
    if read_facts(wanted) is not None:
        return wanted
    other = render_key_of(record, ref, answers, HOOKS_SKIP if hooks == HOOKS_RUN else HOOKS_RUN)
    facts = read_facts(other)
    if facts is not None and (not facts.get("hooks") or hooks == HOOKS_PREVIEW):
        return other
    return None


def _cached_baseline(record: TemplateRecord, ref: str, hooks: str) -> Any:
    """The cached render of the recorded commit with the recorded answers, which a render of
    another commit may start from (``cruft_incremental`` decides whether that is exact)."""
    from tether.templates.cruft_render import Baseline

    if ref == record.commit:
        return None
    key = _usable_entry(record, record.commit, record.answers, hooks)
    facts = read_facts(key) if key is not None else None
    if key is None or facts is None or facts.get("hooks") or facts.get("commit") != record.commit:
        return None
    context = facts.get("context")
    if not isinstance(context, dict):
        return None
    return Baseline(record.commit, renders_home() / key / TREE, context)


def render_record(
    record: TemplateRecord,
    ref: str,
    answers: dict[str, Any],
    trust: bool = False,
    hooks: str = HOOKS_REFUSE,
) -> tuple[Path, dict[str, Any]]:
    """The render of ``record``'s template at ``ref`` with ``answers`` (cached). A cruft
    template's hooks are treated as ``hooks`` says (``templates.HOOKS_*``)."""
    if record.kind == COPIER:
        from tether.templates import copier_child

        def build(tree: Path) -> dict[str, Any]:
            facts = copier_child.render(record.src, ref, answers, tree, record.path, trust)
            return {
                "commit": facts.commit,
                "version": facts.version,
                "exclude": list(facts.exclude),
                "exclude_patterns": list(facts.exclude_patterns),
                "skip_if_exists": list(facts.skip_if_exists),
                "answers_file": facts.answers_file,
                "unsafe": list(facts.unsafe),
            }

    else:
        from tether.templates import cruft_render

        def build(tree: Path) -> dict[str, Any]:
            facts: dict[str, Any] = cruft_render.render(
                record,
                ref,
                answers,
                tree,
                run_hooks=hooks == HOOKS_RUN,
                refuse_hooks=hooks == HOOKS_REFUSE,
                baseline=_cached_baseline(record, ref, hooks),
            )
            return facts

        key = _usable_entry(record, ref, answers, hooks) or render_key_of(
            record, ref, answers, hooks
        )
        tree, facts, _cached = cached_render(key, build)
        if hooks == HOOKS_REFUSE and facts.get("hooks"):
            raise cruft_render.hooks_refusal(record, list(facts["hooks"]))
        return tree, facts

    tree, facts, _cached = cached_render(render_key_of(record, ref, answers), build)
    commit, version = facts.get("commit"), facts.get("version")
    if isinstance(commit, str) and isinstance(version, str):
        from tether.templates.copier_render import remember_described

        remember_described(record.src, ref, commit, version)
    return tree, facts
