"""copier's own library at an edge: render a template at a version with a set of answers,
say what its ``copier.yml`` declares, and run its migrations and tasks under copier's
environment contract. Imported only when a copier project is updated (``tether[copier]``).

The migrations and tasks are run by copier's own ``Worker`` (its ``_execute_tasks``, with
the operation set to ``update``), so their conditions, their Jinja rendering, their working
folder and their environment (``STAGE``, ``VERSION_FROM``, ``VERSION_TO``,
``VERSION_PEP440_*``, ``VERSION_CURRENT``, ``COPIER_OPERATION``) are copier's, not a copy
of them. That is copier's private API: the extra pins the copier majors it was checked
against (docs/templates.md).
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tether.errors import TetherError

RENDERER = "copier"
INSTALL_HINT = "pip install 'tether[copier]'"


def _copier() -> Any:
    try:
        import copier
    except ImportError:
        raise TetherError(
            f"this project was made by copier; updating it needs copier's library ({INSTALL_HINT})"
        ) from None
    return copier


@functools.lru_cache(maxsize=1)
def renderer_version() -> str:
    """copier's version, read from its installed metadata (importing copier costs a second,
    and a cached render needs no copier at all)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{RENDERER}-{version('copier')}"
    except PackageNotFoundError:
        _copier()  # says how to install it
        raise


@dataclass(frozen=True)
class CopierFacts:
    """What one version of a template declares, as copier reads it."""

    commit: str  # copier's ``_commit`` for that version (``git describe --tags --always``)
    version: str  # PEP 440, as copier orders versions ("" when the commit names none)
    exclude: tuple[str, ...]
    exclude_patterns: tuple[str, ...]  # ``exclude`` rendered with the answers, as matched
    skip_if_exists: tuple[str, ...]
    answers_file: str
    unsafe: tuple[str, ...]  # the features copier runs only with --trust


def _problem(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """copier prints progress and warnings of its own: tether reports instead."""
    import warnings

    with (
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(io.StringIO()),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        yield


@contextlib.contextmanager
def _template(src: str, ref: str) -> Iterator[Any]:
    """copier's ``Template`` of ``src`` at ``ref``: the command's
    (``templates.fetch_once_per_command``), else one removed after the block."""
    from copier._template import Template

    shared = _commands_template(src, ref)
    if shared is not None:
        yield shared
        return
    template = Template(url=src, ref=ref)
    try:
        yield template
    finally:
        template._cleanup()


@contextlib.contextmanager
def _version_migrated_from(src: str, ref: str) -> Iterator[Any]:
    """copier's ``Template`` of the version an update starts from, of which copier reads
    only its ``commit`` and ``version`` (``Template.migration_tasks``): the two copier gave
    when it rendered that version (``remember_described``), nothing cloned; else
    ``_template``'s."""
    described = _described(src, ref)
    if described is None:
        with _template(src, ref) as template:
            yield template
        return
    from copier._template import Template

    template = Template(url=src, ref=ref)
    _fill_described(template, described)
    yield template  # nothing cloned: nothing to remove


_DESCRIBED = "copier-described"


def remember_described(src: str, ref: str, commit: str, version: str) -> None:
    """Keep for this command (``templates.fetch_once_per_command``) what copier said of
    ``src`` at ``ref`` when it rendered it (the render's facts, made now or read from the
    render cache): its ``_commit`` (``git describe --tags --always``) and its PEP 440
    version ("" for none). copier asks both of a clone of that version (a ``git describe``
    and dunamai's ten git processes); a render is cached by the commit its tag names, so
    they are what copier would say again. Kept only when the description is the ref itself
    (a tag, or a ``git describe`` name): a branch or a commit named otherwise is asked."""
    from packaging.version import InvalidVersion, Version

    from tether.templates import command_fetches

    fetches = command_fetches()
    if fetches is None or commit != ref:
        return
    try:
        Version(version or "0")
    except InvalidVersion:
        return  # not what copier's render wrote: copier is asked
    fetches.kept[(_DESCRIBED, src, ref)] = (commit, version)


def _described(src: str, ref: str) -> tuple[str, str] | None:
    from tether.templates import command_fetches

    fetches = command_fetches()
    described = None if fetches is None else fetches.kept.get((_DESCRIBED, src, ref))
    return described if isinstance(described, tuple) else None


def _fill_described(template: Any, described: tuple[str, str]) -> None:
    """``template``'s ``commit`` and ``version`` as copier described them (cached
    properties: set first, they are what copier reads; ones copier computed stay)."""
    from packaging.version import Version

    commit, version = described
    template.__dict__.setdefault("commit", commit or None)
    template.__dict__.setdefault("version", Version(version) if version else None)


def _commands_template(src: str, ref: str) -> Any | None:
    """The command's ``Template`` of ``src`` at ``ref``, made on first use and removed when
    the command ends; None outside ``templates.fetch_once_per_command``. copier clones the
    template (a clone, a checkout, a submodule update, ``git describe``: about 25 processes)
    for each ``Template``, and an update asks a version up to four questions (its render,
    whether a migration lies between the versions, with ``--trust`` each stage's migrations
    and tasks)."""
    from tether.templates import command_fetches

    fetches = command_fetches()
    if fetches is None:
        return None
    key = (RENDERER, src, ref)
    if key not in fetches.kept:
        from copier._template import Template

        template = Template(url=src, ref=ref)
        fetches.kept[key] = template
        fetches.removals.append(template._cleanup)
    shared = fetches.kept[key]
    described = _described(src, ref)
    if described is not None:
        _fill_described(shared, described)
    return shared


def _reads_the_commands_clone(worker: Any, src: str, ref: str) -> None:
    """``worker`` reads the command's ``Template`` of ``src`` at ``ref`` instead of cloning
    the template itself (copier's ``Worker.template`` is a cached property: set first, it is
    what the worker reads, and the worker does not remove it when it ends)."""
    shared = _commands_template(src, ref)
    if shared is not None:
        worker.__dict__["template"] = shared


def render(
    src: str,
    ref: str,
    answers: dict[str, Any],
    dest: Path,
    answers_file: str | None,
    trust: bool = False,
) -> CopierFacts:
    """Render ``src`` at ``ref`` with ``answers`` into the empty folder ``dest`` (no
    questions asked, no tasks run) and say what that version declares. Jinja extensions
    (code the template imports while it renders) load only with ``trust``, as in copier."""
    _copier()
    from copier._main import Worker
    from copier.errors import CopierError, UnsafeTemplateError

    try:
        with (
            _quiet(),
            _shared_work(),
            Worker(
                src_path=src,
                dst_path=dest,
                data=dict(answers),
                vcs_ref=ref,
                answers_file=Path(answers_file) if answers_file else None,
                defaults=True,
                overwrite=True,
                quiet=True,
                unsafe=trust or is_trusted(src),  # tasks are skipped: only extensions ask
                skip_tasks=True,
            ) as worker,
        ):
            _reads_the_commands_clone(worker, src, ref)
            worker.run_copy()
            exclusions = _rendered_exclusions(worker)
            return _facts(worker.template, ref, worker.answers_relpath, exclusions)
    except UnsafeTemplateError:
        raise TetherError(
            f"template {src} uses jinja_extensions, which run programs: pass --trust if you "
            "trust it (nothing was changed)"
        ) from None
    except (CopierError, OSError, ValueError) as error:
        raise TetherError(f"copier could not render {src} at {ref}: {_problem(error)}") from None
    except Exception as error:  # plumbum's ProcessExecutionError from git, a Jinja error…
        raise TetherError(f"copier could not render {src} at {ref}: {_problem(error)}") from None


@contextlib.contextmanager
def _shared_work() -> Iterator[None]:
    """copier's render with the Jinja compilation of this process shared
    (``_shared_compilation``), and without copier's check of the destination's git index
    after each file (``_sync_git_index_executable_bit``: one git process per file, acting
    only on a git index that tracks the destination's files; a render's destination is
    tether's scratch folder, whose files no index tracks)."""
    import importlib

    main: Any = importlib.import_module("copier._main")
    saved = main.is_git_available
    main.is_git_available = _no_git_index
    try:
        with _shared_compilation():
            yield
    finally:
        main.is_git_available = saved


@contextlib.contextmanager
def _shared_compilation() -> Iterator[None]:
    """copier's Jinja environments with the compilation of this process shared
    (``jinja_sharing``): in a render the same path parts and answers-file name are compiled
    again for every file and the two sides of an update share most sources; each stage of an
    update's migrations and tasks renders the questions' defaults again. copier's module
    names are swapped for the block, under the one-render-at-a-time lock of the render
    cache."""
    import importlib

    from tether.templates.jinja_sharing import share_compilation

    main: Any = importlib.import_module("copier._main")
    base = main.SandboxedEnvironment
    always = {"jinja2_ansible_filters.AnsibleCoreFiltersExtension", main.YieldExtension}

    class SharingEnvironment(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # The extensions copier loads in every render are copier's; any other one is the
            # template's (its _jinja_extensions).
            own = any(e not in always for e in kwargs.get("extensions", ()))
            share_compilation(self, own_extensions=own)

    main.SandboxedEnvironment = SharingEnvironment
    try:
        yield
    finally:
        main.SandboxedEnvironment = base


def _no_git_index() -> bool:
    return False


def _rendered_exclusions(worker: Any) -> tuple[str, ...]:
    """The template's ``_exclude`` patterns as copier matches them: each rendered through
    Jinja with the answers during an update and split on line breaks (copier's
    ``match_exclude``); the raw patterns when copier's private helper is not there."""
    import re

    try:
        return tuple(
            line
            for exclusion in worker.all_exclusions
            for line in re.split(
                r"\r\n|\r|\n",
                worker._render_string(exclusion, extra_context={"_copier_operation": "update"}),
            )
        )
    except Exception:  # copier moved its private helpers: the patterns as written
        return tuple(str(p) for p in worker.template.exclude)


def exclusion_matcher(patterns: Sequence[str]) -> Callable[[str], bool]:
    """Whether a rendered path is excluded by ``patterns``, as copier's own matcher says
    (gitignore-style patterns through pathspec, NFD-normalised)."""
    from unicodedata import normalize

    import pathspec
    from packaging.version import Version

    # copier's choice: pathspec 1.0 renamed the pattern kind it matches with.
    kind = "gitignore" if Version(pathspec.__version__) >= Version("1.0.0") else "gitwildmatch"
    spec = pathspec.PathSpec.from_lines(kind, (normalize("NFD", p) for p in patterns))
    return lambda rel: bool(spec.match_file(normalize("NFD", rel)))


# A tag spelt as a plain release number (``v1.2.3``, ``1.2``): dunamai's pattern reads it as
# that number and nothing more (no pre-release, epoch or local part to serialise).
_PLAIN_RELEASE = re.compile(r"v?[0-9]+(\.[0-9]+)*")


def _version(template: Any, ref: str) -> Any:
    """copier's ``Template.version`` of the clone it rendered ``ref`` from. copier asks
    dunamai, which reads the clone through ten git processes; at a clean checkout of a tag
    that alone points at its commit and is spelt as a plain release number, dunamai's answer
    is that number (the newest tag merged into HEAD is HEAD's own, at a distance of 0, not
    dirty), read here from two. Anything else (a branch, a commit, another tag at the same
    commit, a pre-release, a dunamai archival file, changes in the checkout) is copier's
    own answer. Set on the template, which copier reads again for migrations."""
    from packaging.version import Version

    from tether import git

    if "version" in template.__dict__ or template.vcs != "git":
        return template.version
    clone = Path(template.local_abspath)
    if (
        template.commit != ref
        or not _PLAIN_RELEASE.fullmatch(ref)
        or os.path.lexists(clone / ".git_archival.json")
    ):
        return template.version
    tags = git.run_git(["tag", "--points-at", "HEAD"], cwd=clone, check=False)
    if tags.returncode != 0 or tags.stdout.split() != [ref]:
        return template.version
    changes = git.run_git(["status", "--porcelain"], cwd=clone, check=False)
    if changes.returncode != 0 or changes.stdout.strip():
        return template.version
    version = Version(ref)
    template.__dict__["version"] = version
    return version


def _facts(
    template: Any, ref: str, answers_relpath: Path, exclusions: tuple[str, ...] = ()
) -> CopierFacts:
    unsafe = []
    if template.jinja_extensions:
        unsafe.append("jinja_extensions")
    if template.tasks:
        unsafe.append("tasks")
    if template.config_data.get("migrations") or template._raw_config.get("_migrations"):
        unsafe.append("migrations")
    return CopierFacts(
        commit=str(template.commit or ""),
        version=str(_version(template, ref) or ""),
        exclude=tuple(str(p) for p in template.exclude),
        exclude_patterns=exclusions,
        skip_if_exists=tuple(str(p) for p in template.skip_if_exists),
        answers_file=str(answers_relpath),
        unsafe=tuple(unsafe),
    )


def expanded_url(src: str) -> str:
    """The URL git is given for a template (copier's ``gh:``/``gl:`` shortcuts expanded); a
    plain URL or a local folder is given as it is, without importing copier."""
    plain = "://" in src or (os.path.isdir(src) and not src.startswith(("gh:", "gl:")))
    if plain:
        return src
    _copier()
    from copier._vcs import get_repo

    return str(get_repo(src) or src)


def location(src: str) -> str:
    """What git is given: the expanded URL, or a local folder made absolute."""
    url = expanded_url(src)
    return url if "://" in url or "@" in url else os.path.abspath(url)


@functools.lru_cache(maxsize=64)
def remote_commits(where: str) -> dict[str, str]:
    """The template repository's refs, asked once per command (one ``git ls-remote``,
    bounded as a release source's listing is)."""
    from tether import git
    from tether.sources import limits
    from tether.sources.gitrepo import bound_words, listing_bound

    try:
        return git.remote_commits(where, listing_bound())
    except git.TransferBoundExceeded as error:
        raise TetherError(f"{where}: {bound_words(error, limits.ANSWER_BYTES)}") from None


def is_trusted(src: str) -> bool:
    """Whether copier's own settings file trusts the template (its ``trust`` list)."""
    try:
        from copier._settings import SettingsModel
    except ImportError:
        return False
    try:
        with _quiet():
            return bool(SettingsModel.from_file().is_trusted(src))
    except Exception:  # a broken settings file trusts nothing
        return False


def migrations_in_range(src: str, from_ref: str, to_ref: str) -> bool:
    """Whether copier would run a migration updating from ``from_ref`` to ``to_ref``."""
    _copier()
    from tether.templates.render_cache import ONE_RENDER, no_git_prompts

    with (
        ONE_RENDER,
        no_git_prompts(),
        _quiet(),
        _version_migrated_from(src, from_ref) as old,
        _template(src, to_ref) as new,
    ):
        return any(new.migration_tasks(stage, old) for stage in ("before", "after"))


def run_update_tasks(
    project: Path,
    src: str,
    from_ref: str,
    to_ref: str,
    answers: dict[str, Any],
    answers_file: str,
    stages: Sequence[str],
) -> None:
    """Run the template's migrations of ``stages`` ("before", "after") and, for "tasks",
    its tasks, in ``project`` as ``copier update`` would. A failing command is a
    TetherError naming it and its exit code."""
    _copier()
    from copier._main import Worker, _operation
    from copier._types import Phase
    from copier.errors import TaskError

    from tether.templates.render_cache import ONE_RENDER, no_git_prompts

    token = _operation.set("update")
    try:
        with (
            ONE_RENDER,
            no_git_prompts(),
            _shared_compilation(),
            _version_migrated_from(src, from_ref) as old,
            Worker(
                src_path=src,
                dst_path=project,
                data=dict(answers),
                vcs_ref=to_ref,
                answers_file=Path(answers_file),
                defaults=True,
                overwrite=True,
                quiet=True,
                unsafe=True,
            ) as worker,
        ):
            _reads_the_commands_clone(worker, src, to_ref)
            with _quiet(), Phase.use(Phase.PROMPT):
                worker._ask()
            for stage in stages:
                if stage == "tasks":
                    with Phase.use(Phase.TASKS):
                        worker._execute_tasks(worker.template.tasks)
                    continue
                when: Literal["before", "after"] = "before" if stage == "before" else "after"
                with Phase.use(Phase.MIGRATE):
                    worker._execute_tasks(worker.template.migration_tasks(when, old))
    except TaskError as error:
        raise TetherError(
            f"copier {'task' if 'tasks' in stages else 'migration'} failed: "
            f"{_problem(error)} (exit {error.returncode})"
        ) from None
    finally:
        _operation.reset(token)


def template_tags(src: str) -> list[str]:
    """The template's tags that copier reads as versions (PEP 440), oldest first."""
    from packaging.version import InvalidVersion, Version

    try:
        refs = remote_commits(location(src))
        tags = [r.removeprefix("refs/tags/") for r in refs if r.startswith("refs/tags/")]
    except TetherError as error:
        raise TetherError(f"cannot read the tags of template {src}: {error}") from None
    versions: list[tuple[Version, str]] = []
    for tag in tags:
        try:
            versions.append((Version(tag), tag))
        except InvalidVersion:
            continue
    return [tag for _version, tag in sorted(versions)]


def pep440(text: str) -> Any:
    """``text`` as copier orders versions (a ``git describe`` suffix counts as after the
    tag), None when it is none."""
    from packaging.version import InvalidVersion, Version

    base = text.split("-")[0] if "-g" in text else text
    try:
        return Version(base)
    except InvalidVersion:
        return None
