"""What a template tool recorded in the project it generated: copier's answers file
(``.copier-answers.yml``) and cruft's ``.cruft.json``. Parsing is pure; the caller reads
the bytes. The recorded file is the authority on which template version the project is at
(as GAIA's version marker is): tether's own record never overrides it."""

from __future__ import annotations

import json
import re

from tether.errors import TetherError
from tether.fsio import sha256_bytes
from tether.parselimits import MAX_NESTING, json_loads, shape_problem
from tether.pathrules import project_path_problem
from tether.valueclass import field, valueclass

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which status and check pay
if TYPE_CHECKING:
    from typing import Any

COPIER = "copier"
CRUFT = "cruft"
COPIER_ANSWERS = ".copier-answers.yml"
CRUFT_RECORD = ".cruft.json"


@valueclass(frozen=True)
class TemplateRecord:
    """One project's record of the template it was generated from."""

    kind: str  # COPIER | CRUFT
    path: str  # the record's path in the project (copier's answers file may be renamed)
    src: str  # the template, as recorded (a URL, ``gh:org/repo``, a path)
    commit: str  # the template version the project is at (copier: ``_commit``; cruft: a sha)
    answers: dict[str, Any]  # the answers the project was rendered with
    raw: bytes  # the record's bytes, kept to rewrite it in its own format
    checkout: str | None = None  # cruft: the branch or tag followed
    directory: str | None = None  # cruft: the template's folder inside the repository
    skip: tuple[str, ...] = ()  # cruft: paths never updated
    extra: dict[str, Any] = field(default_factory=dict)  # the rest, kept as it was


def answers_digest(answers: dict[str, Any]) -> str:
    """A stable digest of a set of answers (renders are cached under it)."""
    text = json.dumps(answers, sort_keys=True, separators=(",", ":"), default=str)
    return sha256_bytes(text.encode())


def parse_copier_answers(data: bytes, path: str) -> TemplateRecord:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        loaded = YAML(typ="safe", pure=True).load(data.decode("utf-8"))
    except (YAMLError, UnicodeDecodeError, ValueError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise TetherError(f"{path}: not a readable copier answers file ({reason})") from None
    problem = shape_problem(loaded, MAX_NESTING)
    if problem:
        raise TetherError(f"{path}: {problem}")
    if not isinstance(loaded, dict):
        raise TetherError(f"{path}: a copier answers file is a YAML mapping")
    src, commit = loaded.get("_src_path"), loaded.get("_commit")
    if not isinstance(src, str) or not src:
        raise TetherError(f"{path}: no _src_path: copier cannot say which template made it")
    if commit is None or isinstance(commit, (dict, list)) or not str(commit):
        raise TetherError(f"{path}: no _commit: the template version it was made from is unknown")
    if str(commit).startswith("-") or src.startswith("-"):
        raise TetherError(f"{path}: _commit or _src_path would read as an option to git")
    answers = {str(k): v for k, v in loaded.items() if not str(k).startswith("_")}
    extra = {str(k): v for k, v in loaded.items() if str(k).startswith("_")}
    return TemplateRecord(COPIER, path, src, str(commit), answers, data, extra=extra)


def parse_cruft_record(data: bytes, path: str) -> TemplateRecord:
    try:
        loaded = json_loads(data, max_depth=MAX_NESTING)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise TetherError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(loaded, dict):
        raise TetherError(f"{path}: a cruft record is a JSON object")
    template, commit = loaded.get("template"), loaded.get("commit")
    if not isinstance(template, str) or not template:
        raise TetherError(f"{path}: no 'template': cruft cannot say which template made it")
    if not isinstance(commit, str) or not commit:
        raise TetherError(f"{path}: no 'commit': the template version it was made from is unknown")
    context = loaded.get("context", {})
    answers = context.get("cookiecutter", {}) if isinstance(context, dict) else None
    if not isinstance(answers, dict):
        raise TetherError(f"{path}: 'context' has no 'cookiecutter' object of answers")
    skip = loaded.get("skip", [])
    if not isinstance(skip, list) or not all(isinstance(s, str) for s in skip):
        raise TetherError(f"{path}: 'skip' is a list of paths")
    checkout, directory = loaded.get("checkout"), loaded.get("directory")
    for key, value in (("checkout", checkout), ("directory", directory)):
        if value is not None and not isinstance(value, str):
            raise TetherError(f"{path}: '{key}' is a string or null")
        if isinstance(value, str) and value.startswith("-"):
            raise TetherError(f"{path}: '{key}' {value!r} would read as an option to git")
    if directory and project_path_problem(directory.rstrip("/")):
        problem = project_path_problem(directory.rstrip("/"))
        raise TetherError(f"{path}: 'directory' {directory!r}: {problem}")
    if commit.startswith("-"):
        raise TetherError(f"{path}: 'commit' {commit!r} would read as an option to git")
    return TemplateRecord(
        CRUFT,
        path,
        template,
        commit,
        dict(answers),
        data,
        checkout=checkout,
        directory=directory or None,
        skip=tuple(skip),
        extra={k: v for k, v in loaded.items() if k not in ("template", "commit", "context")},
    )


# Compiled on first use (re keeps it): only a copier project's record is read for it.
_COPIER_COMMIT_LINE = rb"(?m)^(_commit:[ \t]*)(\S.*?)?([ \t]*(#.*)?)$"


def copier_commit_edit(raw: bytes, commit: str) -> bytes | None:
    """The answers file with ``_commit`` set to ``commit`` and every other byte kept; None
    when the file has no one plain ``_commit:`` line to edit."""
    lines = re.findall(_COPIER_COMMIT_LINE, raw)
    if len(lines) != 1:
        return None
    value = commit if re.fullmatch(r"[A-Za-z0-9._+/-]+", commit) else json.dumps(commit)
    return re.sub(
        _COPIER_COMMIT_LINE, lambda m: m.group(1) + value.encode() + m.group(3), raw, count=1
    )


def cruft_record_bytes(raw: bytes, commit: str, context: dict[str, Any] | None) -> bytes:
    """``.cruft.json`` at ``commit`` (with the release's ``context`` when given), laid out
    as cruft writes it (two-space indent, a final newline), every other key kept in place."""
    loaded = json.loads(raw)
    loaded["commit"] = commit
    if context is not None:
        loaded["context"] = context
    return (
        json.dumps(loaded, ensure_ascii=False, indent=2, separators=(",", ": ")) + "\n"
    ).encode()
