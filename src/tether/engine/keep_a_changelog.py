"""Release notes: Keep a Changelog sections between two versions, and the follow-ups
(package or file removals) an adopter may still have to do. Pure: text in, values out.

Nothing here ever runs a command. A suggested action is shown to a person, who decides.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import tomllib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tether.parselimits import json_loads, toml_loads
from tether.versions import SemVer, parse_version

ActionKind = Literal["remove-package", "remove-file", "other"]


@dataclass(frozen=True)
class Section:
    version: str  # as written in the heading, without brackets or a leading "v"
    date: str  # whatever follows the version on the heading line ("" when nothing)
    body: str  # the lines under the heading, trimmed of blank lines at both ends

    def to_json(self) -> dict[str, str]:
        return {"version": self.version, "date": self.date, "body": self.body}


@dataclass(frozen=True)
class AdopterAction:
    version: str  # the section that asked for it
    text: str  # the bullet, on one line, as the publisher wrote it
    command: str | None  # the command for ``target`` alone; None for kind "other"
    kind: ActionKind
    target: str | None  # package name or project-relative path; None for kind "other"

    def to_json(self) -> dict[str, str | None]:
        return {
            "version": self.version,
            "kind": self.kind,
            "command": self.command,
            "target": self.target,
            "text": self.text,
        }


# ---------------------------------------------------------------------------- sections

_HEADING = re.compile(r"^ {0,3}(?P<hashes>#{1,6})(?:[ \t]+(?P<title>.*?))?[ \t]*#*[ \t]*$")
# "[1.2.0] - 2024-01-01", "[1.2.0](url) - date", "v1.2.0 (2024-01-01)", "1.2.0"
_VERSION_TITLE = re.compile(
    r"^\[?(?P<version>[vV]?\d[^\]\s()]*)\]?(?:\([^)]*\))?[ \t]*(?:[-–—:|][ \t]*)?(?P<date>.*)$"
)
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_LINK_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*\S")


def _fenced_flags(lines: Sequence[str]) -> list[bool]:
    """For each line, whether it sits inside a fenced code block (fence lines included)."""
    flags: list[bool] = []
    inside = False
    for line in lines:
        fence = _FENCE.match(line) is not None
        flags.append(inside or fence)
        if fence:
            inside = not inside
    return flags


def _trim_body(lines: list[str]) -> str:
    # The link-reference block at the bottom of the file ends up under the last section;
    # it is navigation for the rendered page, not release notes.
    while lines and (not lines[-1].strip() or _LINK_REFERENCE.match(lines[-1])):
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines)


def _section_heading(title: str) -> tuple[str, str] | None:
    """(version, date) for a version heading; None for "Unreleased" and anything unparsable."""
    match = _VERSION_TITLE.match(title)
    if match is None or parse_version(match.group("version")) is None:
        return None
    version = match.group("version").lstrip("vV")
    date = match.group("date").strip()
    if date.startswith("(") and date.endswith(")"):
        date = date[1:-1].strip()
    return version, date


def parse_changelog(text: str) -> list[Section]:
    """Every version section, in document order.

    A level-1 or level-2 heading ends a section. ``## [Unreleased]``, other level-2
    headings and version headings that do not parse are dropped with their bodies.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    fenced = _fenced_flags(lines)
    sections: list[Section] = []
    current: tuple[str, str] | None = None
    body: list[str] = []
    for line, in_fence in zip(lines, fenced, strict=True):
        heading = None if in_fence else _HEADING.match(line)
        if heading is not None and len(heading.group("hashes")) <= 2:
            if current is not None:
                sections.append(Section(current[0], current[1], _trim_body(body)))
            current = _section_heading(heading.group("title") or "")
            body = []
        elif current is not None:
            body.append(line)
    if current is not None:
        sections.append(Section(current[0], current[1], _trim_body(body)))
    return sections


def _required_version(text: str, option: str) -> SemVer:
    parsed = parse_version(text)
    if parsed is None:
        raise ValueError(f"{option}: {text!r} is not a version")
    return parsed


def sections_between(text: str, from_version: str | None, to_version: str) -> list[Section]:
    """Sections strictly newer than ``from_version`` up to and including ``to_version``,
    newest first, compared by semver. ``from_version`` None means from the beginning.

    When a version appears twice, the first occurrence in the file wins.
    """
    upper = _required_version(to_version, "to")
    lower = None if from_version is None else _required_version(from_version, "from")
    picked: dict[SemVer, Section] = {}
    for section in parse_changelog(text):
        version = parse_version(section.version)
        if version is None or version in picked or version > upper:
            continue
        if lower is None or version > lower:
            picked[version] = section
    return [picked[v] for v in sorted(picked, reverse=True)]


# ---------------------------------------------------------------------------- actions

_ACTION_SUBSECTIONS = ("removed", "changed")
_ACTION_REQUIRED = re.compile(r"\*\*\s*action required\s*:?\s*\*\*", re.IGNORECASE)
# "**Action required:** none." (also "None", "n/a", "no action", "nothing"), also followed by
# the pull requests it came from ("none (#1300)", "none (#1284, #1285)", "none [#12]"): a
# bullet that says so asks nothing of the adopter, whatever commands it quotes.
_ACTION_NONE = re.compile(
    r"\*\*\s*action required\s*:?\s*\*\*\s*:?\s*"
    r"(?:none|n/?a|nothing|no action\b[^.]*)\s*(?:[.;,:()\[\]\u2013\u2014-]|$)",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^(?P<indent>[ \t]*)[-*+][ \t]+(?P<text>.*)$")
_CODE_SPAN = re.compile(r"(?<!`)(`{1,2})(?!`)(?P<code>.+?)(?<!`)\1(?!`)")

# Package manager -> the verbs that remove a dependency.
_PACKAGE_VERBS: dict[str, frozenset[str]] = {
    "pnpm": frozenset({"remove", "rm", "uninstall", "un"}),
    "npm": frozenset({"uninstall", "remove", "rm", "r", "un"}),
    "yarn": frozenset({"remove"}),
    "bun": frozenset({"remove", "rm"}),
    "pip": frozenset({"uninstall"}),
    "pip3": frozenset({"uninstall"}),
    "uv": frozenset({"remove"}),
    "poetry": frozenset({"remove"}),
}
_PYTHON_MANAGERS = frozenset({"pip", "pip3", "uv", "poetry"})
# Per tool, the options whose next word is a value, not a package or a path.
_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "pnpm": frozenset({"--filter", "-F", "--dir", "-C"}),
    "npm": frozenset({"--prefix", "--workspace", "-w"}),
    "yarn": frozenset({"--cwd"}),
    "pip": frozenset({"-r", "--requirement"}),
    "pip3": frozenset({"-r", "--requirement"}),
    "uv": frozenset({"--group", "--optional", "--package"}),
    "poetry": frozenset({"--group", "-G"}),
}
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class _Item:
    subsection: str
    lines: tuple[str, ...]
    code_lines: tuple[str, ...]  # lines of fenced blocks inside the item


def _items(body: str) -> Iterator[_Item]:
    """Top-level bullets of the body, each with its continuation lines and nested bullets."""
    lines = body.split("\n")
    subsection = ""
    item: list[str] | None = None
    code: list[str] = []
    after_blank = False
    for line, in_fence in zip(lines, _fenced_flags(lines), strict=True):
        heading = None if in_fence else _HEADING.match(line)
        bullet = None if in_fence else _BULLET.match(line)
        top_bullet = bullet is not None and len(bullet.group("indent").expandtabs(4)) < 2
        # After a blank line, only indented text still belongs to the bullet above.
        new_paragraph = (
            after_blank and not in_fence and bool(line.strip()) and line[:1] not in " \t"
        )
        if item is not None and (heading is not None or top_bullet or new_paragraph):
            yield _Item(subsection, tuple(item), tuple(code))
            item = None
        if heading is not None:
            subsection = (heading.group("title") or "").strip().lower()
        elif bullet is not None and top_bullet:
            item, code = [bullet.group("text")], []
        elif item is not None and in_fence:
            if not _FENCE.match(line):
                code.append(line.strip())
        elif item is not None and line.strip():
            item.append(line.strip())
        after_blank = not in_fence and not line.strip()
    if item is not None:
        yield _Item(subsection, tuple(item), tuple(code))


def _one_line(lines: Iterable[str]) -> str:
    parts = [_BULLET.sub(r"\g<text>", line) for line in lines]
    return " ".join(" ".join(parts).split())


def _commands(item: _Item) -> list[str]:
    """Inline code spans and fenced lines, split on shell separators."""
    found = [m.group("code").strip() for line in item.lines for m in _CODE_SPAN.finditer(line)]
    found += item.code_lines
    commands: list[str] = []
    for text in found:
        for part in re.split(r"&&|\|\||;", text):
            part = part.strip().removeprefix("$").strip()
            if part:
                commands.append(part)
    return commands


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _invocation(words: list[str]) -> tuple[str, int]:
    """(tool, how many words name the tool and its verb). ``python -m pip`` and
    ``uv pip`` read as ``pip``, ``git rm`` as ``rm``; ("", 0) when it is no removal."""
    if words[:3] in (["python", "-m", "pip"], ["python3", "-m", "pip"]):
        tool, verb_at = "pip", 3
    elif words[:2] == ["uv", "pip"]:
        tool, verb_at = "pip", 2
    elif words[:2] == ["git", "rm"] or words[:1] == ["rm"]:
        return "rm", words.index("rm") + 1
    elif words:
        tool, verb_at = words[0], 1
    else:
        return "", 0
    verbs = _PACKAGE_VERBS.get(tool, frozenset())
    if len(words) > verb_at and words[verb_at] in verbs:
        return tool, verb_at + 1
    return "", 0


def _operands(words: list[str], value_options: frozenset[str]) -> tuple[list[str], list[str]]:
    """(options, operands) of the words after the verb."""
    options: list[str] = []
    operands: list[str] = []
    skip_next = False
    for word in words:
        if skip_next:
            options.append(word)
            skip_next = False
        elif word.startswith("-"):
            options.append(word)
            skip_next = word in value_options
        else:
            operands.append(word)
    return options, operands


def _package_name(word: str, manager: str) -> str:
    if manager in _PYTHON_MANAGERS:
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", word)
        return match.group(0) if match else word
    # "left-pad@1.3.0" and "@scope/pkg@2" name "left-pad" and "@scope/pkg".
    at = word.rfind("@")
    return word[:at] if at > 0 else word


def _clean_path(word: str) -> str | None:
    path = word.removeprefix("./").rstrip("/")
    if not path or path.startswith(("/", "~", "$")) or ".." in path.split("/"):
        return None  # outside the project: nothing tether can check
    return path


def _parse_command(command: str) -> list[tuple[ActionKind, str, str]]:
    """(kind, target, command for that target alone) for each target a command removes."""
    words = _words(command)
    tool, used = _invocation(words)
    if not tool:
        return []
    prefix = words[:used]
    options, operands = _operands(words[used:], _VALUE_OPTIONS.get(tool, frozenset()))
    if tool == "rm":
        paths = [p for p in (_clean_path(w) for w in operands) if p is not None]
        return [("remove-file", p, shlex.join([*prefix, *options, p])) for p in paths]
    return [
        ("remove-package", _package_name(w, tool), shlex.join([*prefix, *options, w]))
        for w in operands
    ]


def _item_actions(version: str, item: _Item) -> list[AdopterAction]:
    text = _one_line(item.lines)
    if _ACTION_NONE.search(text):
        return []
    actions = [
        AdopterAction(version, text, cmd, kind, target)
        for command in _commands(item)
        for kind, target, cmd in _parse_command(command)
    ]
    if not actions and _ACTION_REQUIRED.search(text):
        actions.append(AdopterAction(version, text, None, "other", None))
    return actions


def adopter_actions(sections: Sequence[Section]) -> list[AdopterAction]:
    """Follow-ups asked for under ``### Removed`` or ``### Changed`` of these sections.

    A bullet counts when it carries ``**Action required:**`` or a recognised removal
    command in backticks. Sections are read in the order given (newest first from
    ``sections_between``); the same command asked for twice is kept once, the first time.
    """
    actions: list[AdopterAction] = []
    seen: set[tuple[str, str]] = set()
    for section in sections:
        for item in _items(section.body):
            if not item.subsection.startswith(_ACTION_SUBSECTIONS):
                continue
            for action in _item_actions(section.version, item):
                key = (action.kind, action.command or action.text)
                if key not in seen:
                    seen.add(key)
                    actions.append(action)
    return actions


def _python_name(name: str) -> str:
    # PEP 503: "Foo_Bar" and "foo-bar" are one distribution.
    return re.sub(r"[-_.]+", "-", name).lower()


def _manager(action: AdopterAction) -> str:
    return _invocation(_words(action.command or ""))[0]


def _package_present(action: AdopterAction, present: set[str]) -> bool:
    if action.target is None:
        return False
    if _manager(action) in _PYTHON_MANAGERS:
        return _python_name(action.target) in {_python_name(p) for p in present}
    return action.target in present


def _path_present(target: str | None, present: set[str]) -> bool:
    if target is None:
        return False
    if _GLOB_CHARS & set(target):
        return any(fnmatch.fnmatchcase(p, target) for p in present)
    return target in present or any(p.startswith(target + "/") for p in present)


def applicable_actions(
    actions: Iterable[AdopterAction], present_packages: set[str], present_paths: set[str]
) -> list[AdopterAction]:
    """The actions that still apply: the package is still declared, the path still exists.

    Kind "other" cannot be checked, so it is always kept.
    """
    kept: list[AdopterAction] = []
    for action in actions:
        if action.kind == "remove-package":
            applies = _package_present(action, present_packages)
        elif action.kind == "remove-file":
            applies = _path_present(action.target, present_paths)
        else:
            applies = True
        if applies:
            kept.append(action)
    return kept


# ---------------------------------------------------------------------------- declared packages

_NPM_DEPENDENCY_KEYS = (
    "dependencies",
    "devDependencies",
    "peerDependencies",
    "optionalDependencies",
)
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _requirement_names(specs: Iterable[object]) -> set[str]:
    names: set[str] = set()
    for spec in specs:
        match = _REQUIREMENT_NAME.match(spec) if isinstance(spec, str) else None
        if match:
            names.add(match.group(1))
    return names


def _package_json_names(text: str) -> set[str]:
    try:
        data = json_loads(text)
    except json.JSONDecodeError:
        return set()
    if not isinstance(data, dict):
        return set()
    names: set[str] = set()
    for key in _NPM_DEPENDENCY_KEYS:
        deps = data.get(key)
        if isinstance(deps, dict):
            names.update(str(name) for name in deps)
    return names


def _table(data: object, *keys: str) -> dict[str, Any]:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def _list_values(table: dict[str, Any]) -> Iterator[object]:
    for value in table.values():
        if isinstance(value, list):
            yield from value


def _pyproject_names(text: str) -> set[str]:
    try:
        data = toml_loads(text)
    except tomllib.TOMLDecodeError:
        return set()
    project = _table(data, "project")
    deps = project.get("dependencies")
    names = _requirement_names(deps if isinstance(deps, list) else [])
    names |= _requirement_names(_list_values(_table(data, "project", "optional-dependencies")))
    names |= _requirement_names(_list_values(_table(data, "dependency-groups")))
    poetry = _table(data, "tool", "poetry")
    names |= set(_table(poetry, "dependencies")) | set(_table(poetry, "dev-dependencies"))
    for group in _table(poetry, "group").values():
        names |= set(_table(group, "dependencies"))
    names.discard("python")  # poetry lists the interpreter among dependencies
    return names


def _requirements_names(text: str) -> set[str]:
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return _requirement_names(line for line in lines if line and not line.startswith("-"))


def declared_packages(filename: str, text: str) -> set[str]:
    """Package names a dependency file declares: ``package.json``, ``pyproject.toml`` or a
    ``requirements*.txt``. A file that does not parse declares nothing."""
    base = filename.rsplit("/", 1)[-1]
    if base == "package.json":
        return _package_json_names(text)
    if base == "pyproject.toml":
        return _pyproject_names(text)
    if base.startswith("requirements") and base.endswith(".txt"):
        return _requirements_names(text)
    return set()
