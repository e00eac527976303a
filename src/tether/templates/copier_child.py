"""copier's reads of a template given by URL, in a child process tether stops at a deadline.

copier clones a template itself (it runs ``git clone`` through its own library), so tether
cannot bound that exchange as it bounds its own git calls (``git.TransferBound``). A render
(and the question whether an update crosses a migration) of a template fetched over the
network therefore runs in a child Python process started through the process edge
(``tether.process``): its process group, git included, is stopped at
``TETHER_LIMIT_NETWORK_SECONDS`` (SIGINT first, so copier removes its temporary clone),
and the step fails in one line naming the template and the variable. A template on this
machine (a folder, ``file://``) is read in this process as before: nothing of it waits on a
network.

The child is ``python -I -m tether.templates.copier_child``: it reads its request (a pickle
of the operation and its arguments: the parent is tether, so the child trusts it) on stdin
and writes its answer as one JSON document to the stdout it was given, with whatever
copier or git print sent to stderr instead.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

from tether import process
from tether.errors import TetherError
from tether.sources import limits
from tether.templates import copier_render
from tether.templates.copier_render import CopierFacts

RENDER = "render"
MIGRATIONS = "migrations_in_range"


def over_network(src: str) -> bool:
    """Whether copier fetches the template ``src`` over a network (a URL other than
    ``file://``, an scp-like ``user@host:path``, copier's ``gh:``/``gl:`` shortcuts)."""
    if os.path.isdir(src) and not src.startswith(("gh:", "gl:")):
        return False
    url = copier_render.expanded_url(src)
    if url.startswith("file://") or os.path.isdir(url):
        return False
    return "://" in url or "@" in url


def render(
    src: str,
    ref: str,
    answers: dict[str, Any],
    dest: Path,
    answers_file: str | None,
    trust: bool = False,
) -> CopierFacts:
    """``copier_render.render``, in a bounded child when the template is fetched over the
    network."""
    if not over_network(src):
        return copier_render.render(src, ref, answers, dest, answers_file, trust)
    arguments = {
        "src": src,
        "ref": ref,
        "answers": answers,
        "dest": str(dest),
        "answers_file": answers_file,
        "trust": trust,
    }
    answer = _in_child(RENDER, arguments, f"copier could not render {src} at {ref}")
    return CopierFacts(
        commit=str(answer["commit"]),
        version=str(answer["version"]),
        exclude=tuple(answer["exclude"]),
        exclude_patterns=tuple(answer["exclude_patterns"]),
        skip_if_exists=tuple(answer["skip_if_exists"]),
        answers_file=str(answer["answers_file"]),
        unsafe=tuple(answer["unsafe"]),
    )


def migrations_in_range(src: str, from_ref: str, to_ref: str) -> bool:
    """``copier_render.migrations_in_range``, in a bounded child when the template is
    fetched over the network."""
    if not over_network(src):
        return copier_render.migrations_in_range(src, from_ref, to_ref)
    arguments = {"src": src, "from_ref": from_ref, "to_ref": to_ref}
    what = f"copier could not read the migrations of {src} from {from_ref} to {to_ref}"
    return bool(_in_child(MIGRATIONS, arguments, what))


def _in_child(operation: str, arguments: dict[str, Any], what: str) -> Any:
    """The child's answer to ``operation``; TetherError starting with ``what`` when the
    deadline stopped it, it failed or it gave no answer."""
    seconds = limits.seconds_limit(limits.NETWORK_SECONDS, limits.DEFAULT_NETWORK_SECONDS)
    # -I: no PYTHON* variable, and not the working folder on the import path, where a
    # folder named like a module of tether's would be imported instead.
    command = [sys.executable, "-I", "-m", "tether.templates.copier_child"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        ran = process.run(
            command,
            input=pickle.dumps((operation, arguments)),
            timeout=seconds,
            output=out,
            errors=err,
        )
        out.seek(0)
        said = out.read()
        err.seek(0)
        complaint = err.read().decode("utf-8", "replace").strip().splitlines()
    if ran.timed_out:
        raise TetherError(
            f"{what}: copier took longer than {seconds:g} s ({limits.NETWORK_SECONDS} sets it)"
        )
    try:
        answer = json.loads(said)
    except ValueError:
        why = complaint[-1] if complaint else ran.end_words()
        raise TetherError(f"{what}: {why}") from None
    if "error" in answer:
        raise TetherError(str(answer["error"]))
    return answer["answer"]


def _answer(operation: str, arguments: dict[str, Any]) -> Any:
    if operation == RENDER:
        facts = copier_render.render(
            arguments["src"],
            arguments["ref"],
            arguments["answers"],
            Path(arguments["dest"]),
            arguments["answers_file"],
            arguments["trust"],
        )
        return {name: getattr(facts, name) for name in CopierFacts.__dataclass_fields__}
    if operation == MIGRATIONS:
        return copier_render.migrations_in_range(
            arguments["src"], arguments["from_ref"], arguments["to_ref"]
        )
    raise TetherError(f"unknown request {operation!r}")


def main() -> int:
    """The child: one request on stdin, one answer on the stdout it was started with."""
    answers_to = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # anything else printed (copier, git) goes to stderr
    operation, arguments = pickle.load(sys.stdin.buffer)
    try:
        answer: dict[str, Any] = {"answer": _answer(operation, arguments)}
    except TetherError as error:
        answer = {"error": str(error)}
    answers_to.write(json.dumps(answer))
    answers_to.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
