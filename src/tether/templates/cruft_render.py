"""cookiecutter's library at an edge, for projects cruft links to their template
(``tether[cruft]``): render the template at a commit with the recorded context, as
``cruft update`` renders its two sides (the template repository at that commit, its
``directory``, no questions asked, the context's private ``_`` keys not passed back as
answers), and find the commit to update to. Imported only when such a project is updated.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import io
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.errors import TetherError
from tether.templates import cruft_incremental
from tether.templates.jinja_sharing import renders_as_written, share_compilation
from tether.templates.records import TemplateRecord

RENDERER = "cookiecutter"
INSTALL_HINT = "pip install 'tether[cruft]'"


def _cookiecutter() -> Any:
    try:
        import cookiecutter.generate
        import cookiecutter.prompt
    except ImportError:
        raise TetherError(
            "this project was made by cookiecutter and is linked by cruft; updating it needs "
            f"cookiecutter's library ({INSTALL_HINT})"
        ) from None
    return cookiecutter


@functools.lru_cache(maxsize=1)
def renderer_version() -> str:
    """cookiecutter's version, from its installed metadata: a cached render needs no
    import of cookiecutter."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{RENDERER}-{version('cookiecutter')}"
    except PackageNotFoundError:
        _cookiecutter()  # says how to install it
        raise


def _location(src: str) -> str:
    """Where git finds the template: a local path made absolute (as cruft does)."""
    if "://" in src or "@" in src or src.startswith(("gh:", "gl:", "bb:")):
        return src
    return os.path.abspath(os.path.expanduser(src))


def target_commit(record: TemplateRecord, wanted: str | None) -> str:
    """The commit to update to: ``--to`` (a tag, branch or commit of the template), else
    the newest commit of the branch the record follows (``checkout``), else of the
    template's default branch."""
    from tether import git
    from tether.sources import limits
    from tether.sources.gitrepo import bound_words, listing_bound

    location = _location(record.src)
    try:
        refs = git.remote_commits(location, listing_bound())
    except TetherError as error:
        why = bound_words(error, limits.ANSWER_BYTES)
        raise TetherError(f"cannot read the template {record.src}: {why}") from None
    name = wanted or record.checkout
    if name is None:
        head = refs.get("HEAD")
        if head is None:
            raise TetherError(f"template {record.src} has no default branch to follow")
        return head
    for ref in (f"refs/tags/{name}", f"refs/heads/{name}", name):
        if ref in refs:
            return refs[ref]
    if all(c in "0123456789abcdef" for c in name) and len(name) >= 7:
        return name  # a commit: checked when the template is rendered at it
    raise TetherError(f"template {record.src} has no tag or branch {name!r}")


# The hooks cookiecutter's ``generate_files`` runs (``pre_prompt`` runs only when
# cookiecutter asks questions, which neither cruft's update nor tether's renders do).
HOOK_NAMES = ("pre_gen_project", "post_gen_project")


def template_hooks(record: TemplateRecord, inner: Path) -> list[str]:
    """The hook programs the template at ``inner`` ships, as paths in its repository."""
    from cookiecutter.hooks import valid_hook

    folder = inner / "hooks"
    if not folder.is_dir():
        return []
    prefix = f"{record.directory.strip('/')}/hooks/" if record.directory else "hooks/"
    return sorted(
        prefix + entry.name
        for entry in folder.iterdir()
        if entry.is_file() and any(valid_hook(entry.name, name) for name in HOOK_NAMES)
    )


def hooks_refusal(record: TemplateRecord, hooks: list[str]) -> TetherError:
    """The one line an update without --trust gets for a template that ships hooks."""
    return TetherError(
        f"template {record.src} ships {', '.join(hooks)}, which runs programs: pass --trust "
        "if you trust it, or --no-programs to render it without them (nothing was changed)"
    )


def render(
    record: TemplateRecord,
    commit: str,
    answers: dict[str, Any],
    dest: Path,
    run_hooks: bool = False,
    refuse_hooks: bool = False,
    baseline: Baseline | None = None,
) -> dict[str, Any]:
    """Render the template at ``commit`` with ``answers`` into ``dest``; returns the
    facts cruft records (the context the render was made with), the hooks the template
    ships and whether they ran. Hooks run only with ``run_hooks``; with ``refuse_hooks``
    a template that ships any is refused before anything is rendered. With ``baseline``
    (the render of another commit of the same template) only the sources that changed are
    rendered when that is proven exact (``cruft_incremental``), else the whole template."""
    cookiecutter = _cookiecutter()
    if baseline is not None:
        facts = _render_from_baseline(cookiecutter, record, commit, answers, dest, baseline)
        if facts is not None:
            return facts
    else:
        cruft_incremental.note_full("no baseline render")

    work = Path(tempfile.mkdtemp(prefix="tether-cruft-"))
    try:
        repo = work / "repo"
        try:
            _check_out(record, commit, repo)
        except TetherError as error:
            raise TetherError(f"cannot check out {commit} of {record.src}: {error}") from None
        inner = repo / (record.directory or "")
        context_file = inner / "cookiecutter.json"
        if not context_file.is_file():
            raise TetherError(
                f"template {record.src} at {commit[:12]}: no cookiecutter.json"
                + (f" in {record.directory}" if record.directory else "")
            )
        hooks = template_hooks(record, inner)
        if hooks and refuse_hooks:
            raise hooks_refusal(record, hooks)
        extra = {k: v for k, v in answers.items() if not k.startswith("_")}
        out = work / "out"
        out.mkdir()
        with _quiet(), _shared_work(link_outputs=not run_hooks):
            from cookiecutter.config import get_user_config

            config = get_user_config(config_file=None, default_config=True)
            context = cookiecutter.generate.generate_context(
                context_file=str(context_file),
                default_context=config["default_context"],
                extra_context=extra,
            )
            context["cookiecutter"] = cookiecutter.prompt.prompt_for_config(context, True)
            context["cookiecutter"]["_template"] = record.src
            context["cookiecutter"]["_commit"] = commit
            made = cookiecutter.generate.generate_files(
                repo_dir=str(inner),
                context=context,
                overwrite_if_exists=True,
                output_dir=str(out),
                accept_hooks=run_hooks,
            )
        shutil.move(str(made), str(dest))
        return {
            "commit": commit,
            "context": _plain(context),
            "hooks": hooks,
            "hooks_run": bool(hooks) and run_hooks,
        }
    except TetherError:
        raise
    except Exception as error:  # cookiecutter's own errors, Jinja's, a failing hook
        text = str(error).strip().splitlines()
        reason = text[0] if text else type(error).__name__
        raise TetherError(
            f"cookiecutter could not render {record.src} at {commit[:12]}: {reason}"
        ) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)


@dataclass(frozen=True)
class Baseline:
    """A cached render of the template at ``commit``: its tree and its facts' context."""

    commit: str
    tree: Path
    context: dict[str, Any]


def _render_from_baseline(
    cookiecutter: Any,
    record: TemplateRecord,
    commit: str,
    answers: dict[str, Any],
    dest: Path,
    baseline: Baseline,
) -> dict[str, Any] | None:
    """The incremental render, or None (and the reason noted) when it is not proven exact."""
    from tether import git

    location = _location(record.src)
    if not (os.path.isdir(location) and git.is_git_repo(Path(location))):
        cruft_incremental.note_full("the template is not a repository on disk")
        return None
    try:
        with _quiet(), _shared_work(link_outputs=True):  # its own scratch sources, no hook
            made = cruft_incremental.render(
                cookiecutter,
                record,
                Path(location),
                baseline.commit,
                baseline.tree,
                baseline.context,
                commit,
                answers,
                dest,
                _plain,
            )
    except Exception as error:  # cookiecutter's or Jinja's: the full render says it its way
        shutil.rmtree(dest, ignore_errors=True)
        cruft_incremental.note_full(f"{type(error).__name__}")
        return None
    if isinstance(made, str):
        cruft_incremental.note_full(made)
        return None
    cruft_incremental.RENDERS["incremental"] = cruft_incremental.RENDERS.get("incremental", 0) + 1
    return made


def _check_out(record: TemplateRecord, commit: str, dest: Path) -> None:
    """The template's files at ``commit`` in ``dest``: a repository on disk is read in place
    (its tree at that commit, blob by blob, as a release source is: no clone, and no filter
    program of the repository's runs), a remote one is cloned."""
    from tether import git

    location = _location(record.src)
    if os.path.isdir(location) and git.is_git_repo(Path(location)):
        from tether.sources.extract import extract_tar_safely
        from tether.sources.gitrepo import write_tree_tar

        archive = dest.parent / "tree.tar"
        write_tree_tar(Path(location), commit, archive)
        extract_tar_safely(
            archive, dest, strip_single_top=False, label=f"{record.src}@{commit[:12]}"
        )
        archive.unlink()
        return
    from tether.sources import limits
    from tether.sources.gitrepo import bound_words, transfer_bound

    try:  # a remote template is a download like a release's
        git.clone_checkout(location, dest, commit, transfer_bound())
    except git.TransferBoundExceeded as error:
        why = bound_words(error, limits.DOWNLOAD_BYTES)
        raise TetherError(f"cannot fetch the template {record.src}: {why}") from None


# binaryornot's verdict on a file's starting chunk, remembered for the renders of this
# process (the two sides of an update share most files): a pure function of the chunk, so
# the render is the same with or without it. Bounded.
@functools.lru_cache(maxsize=20_000)
def _binary_chunk(chunk: bytes) -> bool:
    from binaryornot.helpers import is_binary_string

    return bool(is_binary_string(chunk))


def _is_binary(filename: Any, *, check_extensions: bool = True) -> bool:
    """binaryornot's ``is_binary`` (its extension check, then its verdict on the file's
    starting chunk), the verdict remembered per chunk."""
    from binaryornot.helpers import get_starting_chunk, has_binary_extension

    if check_extensions and has_binary_extension(filename):
        return True
    return _binary_chunk(bytes(get_starting_chunk(filename)))


@contextlib.contextmanager
def _shared_work(link_outputs: bool = False) -> Any:
    """cookiecutter's ``generate_files`` with work shared between the renders of this
    process (Jinja's compilation, binaryornot's verdicts), and a source without Jinja written
    as it is (``_write_verbatim``): its module names swapped for the render, under the
    one-render-at-a-time lock of the render cache. With ``link_outputs`` (the sources are
    tether's own scratch copy, removed after the render, and no hook runs that could change an
    output in place) such an output is a second name of its source instead of a copy."""
    import cookiecutter.generate as generate

    saved = generate.create_env_with_context, generate.is_binary, generate.generate_file
    make_environment, _, generate_file = saved

    def create_env_with_context(context: dict[str, Any]) -> Any:
        own = bool(context.get("cookiecutter", {}).get("_extensions"))
        return share_compilation(make_environment(context), own_extensions=own)

    def generate_verbatim_or_file(
        project_dir: str,
        infile: str,
        context: dict[str, Any],
        env: Any,
        skip_if_file_exists: bool = False,
    ) -> None:
        if not _write_verbatim(
            project_dir, infile, context, env, skip_if_file_exists, link_outputs
        ):
            generate_file(project_dir, infile, context, env, skip_if_file_exists)

    generate.create_env_with_context = create_env_with_context
    generate.is_binary = _is_binary
    generate.generate_file = generate_verbatim_or_file
    try:
        yield
    finally:
        generate.create_env_with_context, generate.is_binary, generate.generate_file = saved


# The sources written out as their own bytes in this process (tests read it). Bounded.
VERBATIM: collections.deque[str] = collections.deque(maxlen=10_000)


def _renders_verbatim(env: Any, context: dict[str, Any], name: str, data: bytes) -> bool:
    """Whether cookiecutter's ``generate_file`` writes the source ``data`` (at ``name``) out
    as its own bytes under its own name, whichever way it takes (copied as binary, or
    rendered as text): no ``_new_lines`` asked for, the name has no newline and renders as
    written, the text is UTF-8 (what the text path reads it as) and renders as written (with
    one newline style only: cookiecutter writes every newline back as the first one it saw).
    Anything else: False, and cookiecutter's own code runs."""
    if context.get("cookiecutter", {}).get("_new_lines"):
        return False
    if "\n" in name or "\r" in name or not renders_as_written(env, name):
        return False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return renders_as_written(env, text)


def _write_verbatim(
    project_dir: str,
    infile: str,
    context: dict[str, Any],
    env: Any,
    skip_if_file_exists: bool,
    link_output: bool,
) -> bool:
    """cookiecutter's ``generate_file`` for a source that renders to its own bytes (see
    ``_renders_verbatim``), without compiling it or asking binaryornot about it: the same
    output path, the same skips, the same bytes, the source's mode copied (with
    ``link_output``, the source's file itself under the output's name: same bytes, same mode,
    no data written). False (nothing written) when that is not proven; the caller then runs
    cookiecutter's own."""
    try:
        with open(infile, "rb") as source:
            data = source.read()
    except OSError:
        return False
    if not _renders_verbatim(env, context, infile, data):
        return False
    outfile = os.path.join(project_dir, infile)
    if os.path.isdir(outfile):
        return True  # cookiecutter's "the resulting file name is empty": nothing written
    if skip_if_file_exists and os.path.exists(outfile):
        return True
    try:  # the source is a file of tether's own scratch copy: its bytes and mode, shared
        if not link_output or not os.path.isfile(infile) or os.path.islink(infile):
            raise OSError("not linked")
        os.link(infile, outfile, follow_symlinks=False)
    except OSError:
        with open(outfile, "wb") as target:
            target.write(data)
        shutil.copymode(infile, outfile)
    VERBATIM.append(infile)
    return True


def _plain(value: Any) -> Any:
    """The context as JSON values (cookiecutter hands back OrderedDicts)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@contextlib.contextmanager
def _quiet() -> Any:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield
