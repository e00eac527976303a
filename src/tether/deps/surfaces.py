"""Engine surfaces beyond the package manifests: container images, CI, mise, ``devEngines``,
``.bun-version``. Each is read line by line so an edit touches only the version's own text.

A *simple pin* (``FROM node:20-alpine``, ``node-version: 20.x``, ``node = "22.11.0"``,
``ARG NODE_VERSION=20``) becomes an occurrence that converges like any other runtime locus,
keeping its precision and whatever follows the version (an image variant, ``.x``, quotes, a
comment). Anything else that names an engine version — a matrix, an expression, a build
argument, an alias, an image pinned by digest, a list — is *left as is*: reported with its
file and line (kind ``left-as-is``), never rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tether.deps.manifests import ProjectScan, read_lines
from tether.deps.model import Declared, LeftAlone, Locus, Unmovable

LEFT_AS_IS = "left-as-is"
# The engines a run moves: the runtime and the package managers.
TOOLS = ("node", "npm", "pnpm", "yarn", "bun")
# A version a pin file or field holds that tether can rewrite: an operator and 1 to 3 parts.
_PLAIN = re.compile(r"^(?P<op>\^|~|>=|=|v)?(?P<version>\d+(?:\.\d+){0,2})$")
# Folders never searched for surfaces: dependencies, VCS data, build output.
_PRUNED = {"node_modules", ".git", ".hg", ".svn", "dist", "build", ".next", "vendor"}
_MAX_DEPTH = 3
_PIN = re.compile(r"^(?P<version>\d+(?:\.\d+){0,2})(?P<rest>.*)$", re.S)
_VARIANT = re.compile(r"^(\.x)?(-[A-Za-z0-9][A-Za-z0-9._-]*)?$")

# FROM [--platform=…] [docker.io/][library/]node:TAG [AS name]
_FROM = re.compile(
    r"^(?P<head>\s*FROM\s+(?:--\S+\s+)*(?:docker\.io/)?(?:library/)?node:)(?P<tag>\S+)",
    re.I,
)
_ARG = re.compile(r"^(?P<head>\s*ARG\s+NODE_VERSION\s*=\s*)(?P<tag>\S+)", re.I)
_NODE_VERSION = re.compile(r"^(?P<head>\s*(?:-\s+)?node-version:\s*)(?P<value>.*)$")
_GITLAB_IMAGE = re.compile(
    r"^(?P<head>\s*(?:-\s+)?(?:image|name):\s*['\"]?(?:docker\.io/)?(?:library/)?node:)"
    r"(?P<tag>[^\s'\"]+)"
)
_MISE_TOOL = re.compile(
    r"^(?P<head>\s*['\"]?(?P<tool>node|nodejs|bun|pnpm|yarn|npm)['\"]?\s*=\s*)(?P<value>.*)$"
)
_MISE_TOOLS = {
    "node": "node",
    "nodejs": "node",
    "bun": "bun",
    "pnpm": "pnpm",
    "yarn": "yarn",
    "npm": "npm",
}

# Records one locus: the project, the tool, the line or value as written, where, and the pin
# (or the reason it is left as is).
Add = Callable[[ProjectScan, str, str, Locus, Declared | LeftAlone], None]


def engine_declared(text: str) -> Declared | LeftAlone:
    """``>=20.11.0``, ``^20``, ``v20.11.1``, ``22``: kept operator and precision."""
    stripped = text.strip()
    match = _PLAIN.match(stripped)
    if match is None:
        if stripped.startswith(("lts/", "node", "stable", "latest", "iojs")):
            return LeftAlone(Unmovable.ENGINE_ALIAS)
        return LeftAlone(Unmovable.ENGINE_NOT_SIMPLE)
    version = match["version"]
    return Declared(
        prefix=text[: len(text) - len(text.lstrip())],
        op=match["op"] or "",
        version=version,
        suffix=text[len(text.rstrip()) :],
        precision=len(version.split(".")),
    )


def read_surfaces(scan: ProjectScan, add: Add) -> None:
    """Every surface of the project at ``scan.root``; ``add`` records a pin or a reason."""
    for rel in _files(scan.root, _is_dockerfile):
        _dockerfile(scan, rel, add)
    for rel in _files(scan.root / ".github" / "workflows", _is_yaml, ".github/workflows"):
        _workflow(scan, rel, add)
    if (scan.root / ".gitlab-ci.yml").is_file():
        _gitlab(scan, ".gitlab-ci.yml", add)
    for rel in ("mise.toml", ".mise.toml"):
        if (scan.root / rel).is_file():
            _mise(scan, rel, add)
    bun = read_lines(scan, ".bun-version")
    for index, line in enumerate(bun or []):
        if line.strip() and not line.strip().startswith("#"):
            locus = Locus(".bun-version", ".bun-version", "text", (index,))
            indent = line[: len(line) - len(line.lstrip())]
            trailing = line[len(line.rstrip()) :]
            add(scan, "bun", line, locus, _pin(line, indent, line.strip(), trailing))
            break


def read_dev_engines(scan: ProjectScan, rel: str, doc: dict[str, Any], add: Add) -> None:
    """``devEngines.runtime`` and ``devEngines.packageManager`` (an object or a list of
    them): what developing the package needs, so rewritten in any package."""
    section = doc.get("devEngines")
    if not isinstance(section, dict):
        return
    for field in ("runtime", "packageManager"):
        entries = section.get(field)
        listed = entries if isinstance(entries, list) else [entries]
        for index, entry in enumerate(listed):
            if not isinstance(entry, dict) or entry.get("name") not in TOOLS:
                continue
            version = entry.get("version")
            if not isinstance(version, str):
                continue
            path: tuple[str | int, ...] = ("devEngines", field)
            path += (index, "version") if isinstance(entries, list) else ("version",)
            locus = Locus(rel, f"devEngines.{field}", "json", path)
            add(scan, str(entry["name"]), version, locus, engine_declared(version))


# --- finding the files -------------------------------------------------------------------


def _is_dockerfile(name: str) -> bool:
    return name == "Dockerfile" or name.startswith("Dockerfile.") or name.endswith(".Dockerfile")


def _is_yaml(name: str) -> bool:
    return name.endswith((".yml", ".yaml"))


def _files(top: Path, wanted: Callable[[str], bool], base: str = "") -> list[str]:
    """Matching files under ``top`` (a few levels deep, dependency folders pruned), as
    POSIX paths relative to the project, sorted."""
    return sorted(rel for rel in _walk(top, base, 0) if wanted(rel.rsplit("/", 1)[-1]))


def _walk(folder: Path, base: str, depth: int) -> Iterator[str]:
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return
    for entry in entries:
        rel = f"{base}/{entry.name}" if base else entry.name
        if entry.is_symlink():
            continue  # never followed out of the project
        if entry.is_dir():
            if depth < _MAX_DEPTH and entry.name not in _PRUNED:
                yield from _walk(entry, rel, depth + 1)
        elif entry.is_file():
            yield rel


# --- one surface at a time ---------------------------------------------------------------


def _pin(line: str, head: str, value: str, after: str) -> Declared | LeftAlone:
    """``value`` (found right after ``head`` in ``line``) as a pin keeping everything around
    its version, or the reason it is left as is."""
    match = _PIN.match(value)
    if match is None or _VARIANT.match(match["rest"]) is None:
        return _why(value)
    version = match["version"]
    start = len(head)
    return Declared(
        line[:start],
        "",
        version,
        match["rest"] + after,
        len(version.split(".")),
    )


def _why(value: str) -> LeftAlone:
    if "${" in value or "$(" in value:
        return LeftAlone(Unmovable.EXPRESSION)
    if "@sha256:" in value:
        return LeftAlone(Unmovable.DIGEST)
    if value.startswith("[") or "," in value:
        return LeftAlone(Unmovable.MATRIX)
    return LeftAlone(Unmovable.NOT_PLAIN_VERSION, value)


def _line_locus(rel: str, index: int, what: str) -> Locus:
    return Locus(rel, f"{what} (line {index + 1})", "text", (index,))


def _dockerfile(scan: ProjectScan, rel: str, add: Add) -> None:
    for index, line in enumerate(read_lines(scan, rel) or []):
        for pattern, what in ((_FROM, "FROM node"), (_ARG, "ARG NODE_VERSION")):
            match = pattern.match(line)
            if match is None:
                continue
            tag = match["tag"]
            after = line[match.end("tag") :]
            locus = _line_locus(rel, index, what)
            add(scan, "node", line, locus, _pin(line, match["head"], tag, after))


def _workflow(scan: ProjectScan, rel: str, add: Add) -> None:
    lines = read_lines(scan, rel) or []
    if not any("actions/setup-node" in line for line in lines):
        return
    for index, line in enumerate(lines):
        match = _NODE_VERSION.match(line)
        if match is None:
            continue
        value, _ = _split_comment(match["value"])
        locus = _line_locus(rel, index, "setup-node node-version")
        quote = value[:1] if value[:1] in ("'", '"') and value.endswith(value[:1]) else ""
        inner = value[1:-1] if quote else value
        if not inner:
            continue  # a block list follows: its items are a matrix
        head = match["head"] + quote
        result = _pin(line, head, inner, quote + line[len(match["head"]) + len(value) :])
        add(scan, "node", line, locus, result)


def _split_comment(value: str) -> tuple[str, str]:
    body, hash_, comment = value.partition(" #")
    return body.rstrip(), hash_ + comment


def _gitlab(scan: ProjectScan, rel: str, add: Add) -> None:
    for index, line in enumerate(read_lines(scan, rel) or []):
        match = _GITLAB_IMAGE.match(line)
        if match is None:
            continue
        locus = _line_locus(rel, index, "image node")
        after = line[match.end("tag") :]
        add(scan, "node", line, locus, _pin(line, match["head"], match["tag"], after))


def _mise(scan: ProjectScan, rel: str, add: Add) -> None:
    section = ""
    for index, line in enumerate(read_lines(scan, rel) or []):
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped
            continue
        match = _MISE_TOOL.match(line) if section == "[tools]" else None
        if match is None:
            continue
        tool = _MISE_TOOLS[match["tool"]]
        value, _ = _split_comment(match["value"])
        locus = _line_locus(rel, index, f"[tools] {match['tool']}")
        quote = value[:1] if value[:1] in ("'", '"') and value.endswith(value[:1]) else ""
        if not quote:
            add(scan, tool, line, locus, _why(value))
            continue
        head = match["head"] + quote
        after = line[len(match["head"]) + len(value) - 1 :]
        add(scan, tool, line, locus, _pin(line, head, value[1:-1], after))
