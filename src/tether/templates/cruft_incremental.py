"""The release side of a cruft update rendered from the baseline's render: only the sources
whose bytes changed (or that are new) go through cookiecutter; every other output is the
baseline's file, linked into the new render. Exact only under conditions checked here one by
one; when any of them is not proven, the caller renders in full (``render`` returns the
reason instead of a render).

The conditions: the template is a repository on disk; the answers are the same on both sides
(the contexts are equal apart from ``_commit``); ``cookiecutter.json`` is the same blob; no
hook, no symlink, no copy-only folder, no extension beyond cookiecutter's default set and no
Jinja setting of the template's (``_extensions``, ``_jinja2_env_vars``); no source includes,
imports or extends another (the text ``{% include`` and its kin anywhere in the template); no
source or path name calls cookiecutter's random, uuid or time extensions or Jinja's random
filter or ``lipsum``; every path name renders without ``_commit`` and without the context as
a whole, to a distinct, non-empty path whose folder is its source folder's rendered name. A
source whose text reads ``_commit`` or the whole context is rendered again like a changed one.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

# Any of these anywhere in a template's files means: render in full (another file's change
# would show through an unchanged one).
_COMPOSING = re.compile(rb"\{%[-+]?\s*(?:include|import|from|extends)\b")
_DELIMITERS = (b"{{", b"{%", b"{#")
# Names whose result changes from one render to the next: cookiecutter's default extensions
# (random_ascii_string, uuid4, the ``now`` tag) and Jinja's own random sources.
_UNSTABLE_NAMES = frozenset({"random_ascii_string", "uuid4", "lipsum"})
_UNSTABLE_FILTERS = frozenset({"random"})
_FILE_MODES = ("100644", "100755")
# The renders made each way in this process (tests read it; a full render is "full").
RENDERS: dict[str, int] = {}
FALLBACKS: list[str] = []


class _NotProven(Exception):
    """A condition of an exact incremental render does not hold: render in full."""


def _count(kind: str) -> None:
    RENDERS[kind] = RENDERS.get(kind, 0) + 1


def note_full(reason: str) -> None:
    FALLBACKS.append(reason)
    _count("full")


def _files(entries: list[tuple[str, str, str, str]], inner: str) -> dict[str, tuple[str, str]]:
    """{path under the template's folder: (mode, blob)}; anything but a plain file there is
    not proven."""
    files: dict[str, tuple[str, str]] = {}
    for mode, kind, oid, path in entries:
        if inner and not path.startswith(inner):
            continue
        rel = path[len(inner) :]
        if kind == "tree":
            continue
        if kind != "blob" or mode not in _FILE_MODES:
            raise _NotProven(f"{rel} is not a plain file")
        files[rel] = (mode, oid)
    return files


def _template_folder(files: dict[str, tuple[str, str]], env: Any) -> str:
    """cookiecutter's project folder (``find_template``): the one top-level name holding
    'cookiecutter' and the variable delimiters; more than one is not proven (cookiecutter
    takes the first the file system lists)."""
    tops = {rel.split("/", 1)[0] for rel in files}
    found = [
        name
        for name in tops
        if "cookiecutter" in name
        and env.variable_start_string in name
        and env.variable_end_string in name
    ]
    if len(found) != 1 or f"{found[0]}/" not in {rel[: len(found[0]) + 1] for rel in files}:
        raise _NotProven("no single template folder")
    return found[0]


def _walk(node: Any, parent: Any) -> Any:
    from jinja2 import nodes

    yield node, parent
    for child in node.iter_child_nodes():
        if isinstance(child, nodes.Node):
            yield from _walk(child, node)


def _reads(source: str, env: Any) -> str:
    """What rendering ``source`` depends on beyond the answers: "unstable" (a random, uuid or
    time call), "commit" (``_commit`` or the context as a whole), or "" (the answers only).
    A source Jinja cannot parse, or that composes templates, is not proven."""
    from jinja2 import TemplateSyntaxError, nodes

    try:
        tree = env.parse(source)
    except TemplateSyntaxError:
        raise _NotProven("a source Jinja cannot parse") from None
    dict_names = set(dir(dict))
    verdict = ""
    for node, parent in _walk(tree, None):
        if isinstance(node, (nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)):
            raise _NotProven("a source includes, imports or extends another")
        if isinstance(node, (nodes.ExtensionAttribute, nodes.ImportedName)):
            return "unstable"  # an extension's own call (cookiecutter's ``now`` tag) or kin
        if isinstance(node, (nodes.Filter, nodes.Test)) and node.name in _UNSTABLE_FILTERS:
            return "unstable"
        if isinstance(node, nodes.Const) and str(node.value) in _UNSTABLE_NAMES | _UNSTABLE_FILTERS:
            return "unstable"  # a filter named by a string (``map('random')``) or kin
        if isinstance(node, nodes.Name):
            if node.name in _UNSTABLE_NAMES:
                return "unstable"
            if node.name == "self":  # the template's reference reaches its whole context
                verdict = "commit"
            if node.name != "cookiecutter":
                continue
            key: object = None
            if isinstance(parent, nodes.Getattr) and parent.node is node:
                key = parent.attr
            elif (
                isinstance(parent, nodes.Getitem)
                and parent.node is node
                and isinstance(parent.arg, nodes.Const)
            ):
                key = parent.arg.value
            if not isinstance(key, str) or key == "_commit" or key in dict_names:
                verdict = "commit"
    return verdict


def render(
    cookiecutter: Any,
    record: Any,
    repo: Path,
    base_commit: str,
    base_tree: Path,
    base_context: dict[str, Any],
    commit: str,
    answers: dict[str, Any],
    dest: Path,
    plain: Any,
) -> dict[str, Any] | str:
    """The render of ``commit`` with ``answers`` built into ``dest`` from the baseline's
    render at ``base_tree`` (its facts' context ``base_context``); the facts, or why it was
    not built (``dest`` then does not exist)."""
    try:
        return _render(
            cookiecutter,
            record,
            repo,
            base_commit,
            base_tree,
            base_context,
            commit,
            answers,
            dest,
            plain,
        )
    except _NotProven as why:
        shutil.rmtree(dest, ignore_errors=True)
        return str(why)


def _render(
    cookiecutter: Any,
    record: Any,
    repo: Path,
    base_commit: str,
    base_tree: Path,
    base_context: dict[str, Any],
    commit: str,
    answers: dict[str, Any],
    dest: Path,
    plain: Any,
) -> dict[str, Any]:
    from tether import git
    from tether.templates.jinja_sharing import renders_as_written

    inner = f"{record.directory.strip('/')}/" if record.directory else ""
    old = _files(git.tree_listing(repo, base_commit), inner)
    new = _files(git.tree_listing(repo, commit), inner)
    if "cookiecutter.json" not in new or old.get("cookiecutter.json") != new["cookiecutter.json"]:
        raise _NotProven("cookiecutter.json changed")
    if any(rel.startswith("hooks/") for rel in (*old, *new)):
        raise _NotProven("the template has a hooks folder")
    blobs = git.read_blobs(repo, sorted({oid for _mode, oid in new.values()}))
    if any(_COMPOSING.search(data) for data in blobs.values()):
        raise _NotProven("a source includes, imports or extends another")

    work = Path(tempfile.mkdtemp(prefix="tether-cruft-inc-"))
    try:
        (work / "cookiecutter.json").write_bytes(blobs[new["cookiecutter.json"][1]])
        from cookiecutter.config import get_user_config

        config = get_user_config(config_file=None, default_config=True)
        context = cookiecutter.generate.generate_context(
            context_file=str(work / "cookiecutter.json"),
            default_context=config["default_context"],
            extra_context={k: v for k, v in answers.items() if not k.startswith("_")},
        )
        context["cookiecutter"] = cookiecutter.prompt.prompt_for_config(context, True)
        context["cookiecutter"]["_template"] = record.src
        context["cookiecutter"]["_commit"] = commit
        facts_context = plain(context)
        if {k: v for k, v in facts_context.items() if k != "cookiecutter"} != {
            k: v for k, v in base_context.items() if k != "cookiecutter"
        }:
            raise _NotProven("the context changed")
        ours = {k: v for k, v in facts_context["cookiecutter"].items() if k != "_commit"}
        theirs = {k: v for k, v in base_context.get("cookiecutter", {}).items() if k != "_commit"}
        if ours != theirs:
            raise _NotProven("the answers changed")
        settings = context["cookiecutter"]
        if settings.get("_extensions") or settings.get("_jinja2_env_vars"):
            raise _NotProven("the template sets Jinja up itself")
        env = cookiecutter.generate.create_env_with_context(context)
        top = _template_folder(new, env)
        if _template_folder(old, env) != top:
            raise _NotProven("the template folder changed")
        copy_only = cookiecutter.generate.is_copy_only_path

        def rendered_name(template: str) -> str:
            plain = "\n" not in template and "\r" not in template
            if plain and renders_as_written(env, template):
                return template  # no Jinja in it: nothing to parse or compile
            if _reads(template, env):
                raise _NotProven(f"the path name {template} reads more than the answers")
            name: str = env.from_string(template).render(**context)
            return name

        prefix = f"{top}/"
        sources = {
            rel[len(prefix) :]: entry for rel, entry in new.items() if rel.startswith(prefix)
        }
        folders = {str(PurePosixPath(rel).parent) for rel in sources} - {"."}
        for folder in list(folders):
            folders.update(str(p) for p in PurePosixPath(folder).parents if str(p) != ".")
        for folder in folders:
            if copy_only(folder, context):
                raise _NotProven(f"{folder} is a copy-only folder")
        project = rendered_name(top)
        if not _plain_path(project) or "/" in project:
            raise _NotProven("the project folder's name")
        outputs: dict[str, str] = {}
        out_folders = {}
        for folder in folders:
            name = rendered_name(folder)
            if not _plain_path(name):
                raise _NotProven(f"the folder {folder} renders to {name!r}")
            out_folders[folder] = name
        for folder, name in out_folders.items():
            parent = str(PurePosixPath(folder).parent)
            if str(PurePosixPath(name).parent) != out_folders.get(parent, "."):
                raise _NotProven(f"the folder {folder} renders to {name!r}")
        for rel in sources:
            name = rendered_name(rel)
            parent = str(PurePosixPath(rel).parent)
            expected_parent = out_folders.get(parent, ".")
            if not _plain_path(name) or str(PurePosixPath(name).parent) != expected_parent:
                raise _NotProven(f"{rel} renders to {name!r}")
            outputs[rel] = name
        if len(set(outputs.values())) != len(outputs) or set(outputs.values()) & set(
            out_folders.values()
        ):
            raise _NotProven("two sources render to one path")

        again: list[str] = []
        for rel, (mode, oid) in sources.items():
            data = blobs[oid]
            text: str | None = None
            if not copy_only(rel, context) and any(mark in data for mark in _DELIMITERS):
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    text = None  # cookiecutter copies it as binary or fails on it
            reads = _reads(text, env) if text is not None else ""
            if reads == "unstable":
                raise _NotProven(f"{rel} calls a random, uuid or time extension")
            if old.get(f"{prefix}{rel}") != (mode, oid) or reads == "commit":
                again.append(rel)

        # The sources rendered again, through cookiecutter itself, in a template of their own.
        part = work / "template"
        (part / top).mkdir(parents=True)
        for rel in again:
            mode, oid = sources[rel]
            path = part / top / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(blobs[oid])
            os.chmod(path, 0o755 if mode == "100755" else 0o644)
        (part / "cookiecutter.json").write_bytes(blobs[new["cookiecutter.json"][1]])
        made = Path(
            cookiecutter.generate.generate_files(
                repo_dir=str(part),
                context=context,
                overwrite_if_exists=True,
                output_dir=str(work / "out"),
                accept_hooks=False,
            )
        )
        dest.mkdir(parents=True)
        for name in sorted(set(out_folders.values())):
            (dest / name).mkdir(parents=True, exist_ok=True)
        made_files = {
            str(p.relative_to(made)) for p in made.rglob("*") if p.is_file() or p.is_symlink()
        }
        if made_files != {outputs[rel] for rel in again}:
            raise _NotProven("cookiecutter rendered other files than expected")
        for rel in again:
            os.replace(made / outputs[rel], dest / outputs[rel])
        for rel in sources:
            if rel in again:
                continue
            _link_or_copy(base_tree / outputs[rel], dest / outputs[rel])
        return {"commit": commit, "context": facts_context, "hooks": [], "hooks_run": False}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _plain_path(name: str) -> bool:
    """A relative path of real names: no empty, ``.`` or ``..`` part, nothing absolute, and no
    Jinja left in it (cookiecutter renders a folder's full path again)."""
    if not name or name.startswith("/") or "\\" in name:
        return False
    if any(mark.decode() in name for mark in _DELIMITERS):
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def _link_or_copy(source: Path, target: Path) -> None:
    """The baseline's output as a second name (a render cache entry is never written to), or
    a copy where links are not allowed; a baseline missing the file is not proven."""
    try:
        info = os.lstat(source)
    except OSError:
        raise _NotProven(f"the baseline render lacks {source.name}") from None
    import stat

    if not stat.S_ISREG(info.st_mode):
        raise _NotProven(f"the baseline's {source.name} is not a plain file")
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError:
        try:
            shutil.copy2(source, target)
        except OSError as error:
            raise _NotProven(f"the baseline's {source.name}: {error.strerror}") from None
