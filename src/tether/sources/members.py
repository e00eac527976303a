"""The rules every member of a release obeys, whatever carries it: an archive (tarball or
a git tag's tree, see ``extract``) or a folder on disk (see ``folder``). One set of rules, one
set of messages, so a release is refused for the same reason in the same words either way.
"""

from __future__ import annotations

from tether.errors import TetherError
from tether.pathrules import relpath_problem
from tether.valueclass import valueclass

FILE = "file"
FOLDER = "dir"
SYMLINK = "symlink"
HARDLINK = "hardlink"
_ALLOWED = (FILE, FOLDER, SYMLINK, HARDLINK)


@valueclass(frozen=True)
class Member:
    """One entry of a release as its container lists it."""

    name: str  # as the container spells it
    kind: str  # FILE, FOLDER, SYMLINK, HARDLINK, else what it is ("fifo", "socket", ...)
    size: int = 0
    link: str = ""  # a symlink's target
    # Why its mode may not be installed (a folder release's file; an archive's members lose
    # such bits when unpacked), else None.
    mode_problem: str | None = None


def refusal(container: str, name: str, why: str) -> TetherError:
    """The one-line refusal of a release because of one member."""
    return TetherError(f"refusing {container}: member {name!r} {why}")


def clean_name(raw: str) -> str:
    """Drop the ``./`` prefixes tar adds when archiving ``.``; everything else is kept."""
    name = raw
    while name.startswith("./"):
        name = name[2:]
    return "." if name in ("", ".") else name


def member_problem(member: Member, max_entry_bytes: int) -> str | None:
    """Why the member may not be in a release, judged on its own (the rules that need no
    other member); None when it may."""
    raw = member.name
    if member.kind not in _ALLOWED:
        return f"is a {member.kind}, which a release may not contain"
    if raw.startswith("/") or (len(raw) > 1 and raw[1] == ":"):
        return "has an absolute name"
    name = clean_name(raw)
    problem = None if name == "." else relpath_problem(name)
    if problem is not None:
        return f"has an unsafe name ({problem})"
    if member.size > max_entry_bytes:
        return f"is {member.size} bytes, over the limit of {max_entry_bytes}"
    if member.mode_problem is not None:
        return member.mode_problem
    if member.kind == SYMLINK:
        return _symlink_target_problem(member.link)
    return None


def _symlink_target_problem(target: str) -> str | None:
    if not target:
        return "is a symlink with an empty target"
    if target.startswith("/") or (len(target) > 1 and target[1] == ":"):
        return f"is a symlink to the absolute path {target!r}"
    if "\x00" in target or "\\" in target:
        return f"is a symlink with an unsafe target {target!r}"
    return None


def escape_problem(link: str, symlinks: dict[str, str]) -> str | None:
    """Why the tree's symlink ``link`` may not stay: following it leaves the tree."""
    if not _escapes(link, symlinks):
        return None
    return f"is a symlink leading outside the tree ({symlinks[link]!r})"


def _escapes(link: str, symlinks: dict[str, str]) -> bool:
    """Whether following ``link`` leaves the tree, resolving like the kernel would.

    A lexical check alone is not enough: ``a -> .`` then ``b -> a/../..`` looks inside
    but is not, so the tree's own symlinks are followed on the way. A loop counts as
    leaving (no real release needs one).
    """
    budget = 40
    stack = link.split("/")[:-1]  # the folder holding the link
    pending = symlinks[link].split("/")
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not stack:
                return True
            stack.pop()
            continue
        stack.append(part)
        target = symlinks.get("/".join(stack))
        if target is not None:
            budget -= 1
            if budget == 0 or target.startswith("/"):
                return True
            stack.pop()
            pending = target.split("/") + pending
    return False
