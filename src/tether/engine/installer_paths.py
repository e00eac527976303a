"""The paths GSD's installer rewrites in the Markdown it installs.

GSD's package writes its own config folder as ``~/.claude/`` or ``$HOME/.claude/``; its
installer (``bin/install.js``, ``copyWithPathReplacement`` for ``get-shit-done/`` and
``commands/gsd/``, the agents loop for ``agents/``) replaces those with the install's path
prefix before writing, and records the sha256 of what it wrote. A release's own bytes
therefore do not hash to the recorded pristine hash for any file naming such a path. These
functions redo that rewriting, deterministically, for a given prefix; the caller accepts a
form only when its sha256 is the recorded one, so a wrong guess is never used as a base.

The prefix is the installer's ``pathPrefix``: ``$HOME/<folder below the home>/`` for a
global install inside the home folder, else the install folder's absolute path and ``/``.
Only the Claude Code layout is reproduced (files keep their package path); the runtimes whose
installer converts whole files (OpenCode, Codex, Copilot …) and Claude's ``skills/`` (built
from ``commands/gsd/``) are not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# JavaScript's ``\b`` knows ASCII word characters only, as ``re.ASCII`` does.
_TILDE_DIR = re.compile(r"~/\.claude/")
_HOME_DIR = re.compile(r"\$HOME/\.claude/")
_LOCAL_DIR = re.compile(r"\./\.claude/")
_TILDE_QWEN = re.compile(r"~/\.qwen/")
_HOME_QWEN = re.compile(r"\$HOME/\.qwen/")
_LOCAL_QWEN = re.compile(r"\./\.qwen/")
_TILDE_BARE = re.compile(r"~/\.claude\b", re.ASCII)
_HOME_BARE = re.compile(r"\$HOME/\.claude\b", re.ASCII)


def _js_replace(pattern: re.Pattern[str], text: str, replacement: str) -> str:
    """``text.replace(/pattern/g, replacement)`` as JavaScript does it: in the replacement
    ``$$`` is ``$``, ``$&`` the match, ``$``` what precedes it and ``$'`` what follows (the
    patterns here have no groups, so ``$1`` stays as written)."""

    def expand(match: re.Match[str]) -> str:
        out: list[str] = []
        index = 0
        while index < len(replacement):
            char = replacement[index]
            following = replacement[index + 1 : index + 2]
            if char == "$" and following in ("$", "&", "`", "'"):
                out.append(
                    {
                        "$": "$",
                        "&": match.group(0),
                        "`": text[: match.start()],
                        "'": text[match.end() :],
                    }[following]
                )
                index += 2
                continue
            out.append(char)
            index += 1
        return "".join(out)

    return pattern.sub(expand, text)


def _copied_markdown(text: str, prefix: str, dir_name: str) -> str:
    """``copyWithPathReplacement``: ``get-shit-done/**/*.md`` and ``commands/gsd/**/*.md``."""
    for pattern, replacement in (
        (_TILDE_DIR, prefix),
        (_HOME_DIR, prefix),
        (_LOCAL_DIR, f"./{dir_name}/"),
        (_TILDE_QWEN, prefix),
        (_HOME_QWEN, prefix),
        (_LOCAL_QWEN, f"./{dir_name}/"),
    ):
        text = _js_replace(pattern, text, replacement)
    return text


def _agent(text: str, prefix: str) -> str:
    """The agents loop: ``agents/*.md``, the folder itself also when named without ``/``."""
    bare = prefix.removesuffix("/")
    for pattern, replacement in (
        (_TILDE_DIR, prefix),
        (_HOME_DIR, prefix),
        (_TILDE_BARE, bare),
        (_HOME_BARE, bare),
    ):
        text = _js_replace(pattern, text, replacement)
    return text


def install_prefixes(targets: Sequence[str], homes: Sequence[str]) -> list[str]:
    """The prefixes the installer may have used for an install folder: for each spelling of
    its absolute path, ``$HOME/…/`` when it starts with a spelling of the home folder (the
    installer compares strings, as here), then the absolute path itself (a local install,
    or a global one outside the home folder). Duplicates are dropped, order kept."""
    prefixes: list[str] = []
    for target in targets:
        for home in homes:
            if home and target.startswith(home):
                prefixes.append("$HOME" + target[len(home) :] + "/")
        prefixes.append(target.rstrip("/") + "/")
    return list(dict.fromkeys(prefixes))


def installed_forms(
    rel: str, data: bytes, prefixes: Sequence[str], dir_names: Sequence[str]
) -> list[tuple[str, bytes]]:
    """The bytes the installer writes for the package file ``rel`` (``data``), one per prefix
    (and local folder name) it may have used, as (prefix, bytes); only forms that differ from
    ``data``, each once. Empty for a file the installer copies as it is, and for one that is
    not UTF-8 (the installer would not write those bytes back either)."""
    agent = rel.startswith("agents/") and rel.count("/") == 1
    copied = rel.startswith(("get-shit-done/", "commands/gsd/"))
    if not rel.endswith(".md") or not (agent or copied):
        return []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return []
    forms: dict[bytes, str] = {}
    for prefix in prefixes:
        for dir_name in dir_names if copied else dir_names[:1]:
            written = _agent(text, prefix) if agent else _copied_markdown(text, prefix, dir_name)
            try:
                form = written.encode("utf-8")
            except UnicodeEncodeError:  # a path that is not UTF-8: not what the installer wrote
                continue
            if form != data:
                forms.setdefault(form, prefix)
    return [(prefix, form) for form, prefix in forms.items()]
