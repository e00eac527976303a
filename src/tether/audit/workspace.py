"""Where an audit runs: the checkout root, and where its roster and records live."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tether import git
from tether.errors import TetherError, UsageError
from tether.fsio import atomic_write
from tether.profiles import GAIA, detect_profile


@dataclass(frozen=True)
class Layout:
    profile: str
    roster_path: str  # relative to the root
    roster_key: str  # the list of members inside the roster file
    audit_dir: str  # sidecars and clearance markers (never committed)
    default_hooks: tuple[str, ...]
    machinery_list: str | None = None  # the framework's own list of its gate machinery
    generated_copies: str | None = None  # a folder of build copies no remit should reach


NATIVE_LAYOUT: Final = Layout("native", ".tether/audit.yml", "members", ".tether/audit", ())
# GAIA keeps hooks where its agent runner reads them, its local records under the
# git-ignored .gaia/local/, and the one list of its shared audit machinery in a library
# its digest sources.
GAIA_LAYOUT: Final = Layout(
    "gaia",
    ".gaia/audit-ci.yml",
    "auditors",
    ".gaia/local/audit",
    (".claude/hooks/**",),
    ".claude/hooks/lib/audit-machinery.sh",
    # Byte-identical copies of the workflow templates, regenerated from their source (the
    # node member's remit) and pinned to it by a drift guard.
    ".gaia/cli/templates/workflows/",
)
LAYOUTS: Final = {layout.profile: layout for layout in (NATIVE_LAYOUT, GAIA_LAYOUT)}


def resolve_root(option: str | None) -> Path:
    """The checkout root an audit command works on; exit 2 when it is not one.

    Without ``-C`` that is the top of the checkout around the current directory. A
    given ``-C`` must be the top itself: a subfolder would silently narrow every path.
    """
    if option is not None and not option.strip():
        # An empty root must never stand for "wherever this runs": `git -C ""` and
        # `cd ""` both quietly resolve the ambient tree and review the wrong checkout.
        raise UsageError("-C '' is empty; name the checkout's top folder")
    start = Path(option) if option else Path.cwd()
    top = git.work_tree_top(start)
    if top is None:
        raise UsageError(f"{start} is not inside a git checkout")
    if option and top.resolve() != start.resolve():
        raise UsageError(f"-C {option} is not the top of a checkout (the top is {top})")
    return top.resolve()


def require_head(root: Path) -> str:
    """HEAD's commit: what a scope and a digest are about. A checkout without one has
    nothing to review, which must never read as an empty review."""
    head = git.head_commit(root)
    if head is None:
        raise TetherError(f"{root} has no commits yet; nothing to review")
    return head


def choose_layout(root: Path, forced: str | None = None) -> Layout:
    """The forced profile's layout, else the detected profile's, else by which roster exists."""
    if forced:
        return LAYOUTS[forced]
    profile = detect_profile(root)
    if profile is not None:
        return GAIA_LAYOUT if profile.name == GAIA.name else NATIVE_LAYOUT
    if (
        not (root / NATIVE_LAYOUT.roster_path).is_file()
        and (root / GAIA_LAYOUT.roster_path).is_file()
    ):
        return GAIA_LAYOUT
    return NATIVE_LAYOUT


_SLUG_SAFE: Final = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def branch_slug(branch: str) -> str:
    """The branch name with every byte outside ``[A-Za-z0-9_-]`` percent-encoded.

    Injective, so two branches never share a record, and free of ``/`` and ``.`` so the
    slug is one path segment that cannot be confused with the file name's separators.
    """
    return "".join(chr(b) if b in _SLUG_SAFE else f"%{b:02X}" for b in branch.encode("utf-8"))


def audit_dir(root: Path, layout: Layout) -> Path:
    """The records folder, created on first use; tether's own copy ignores itself in git."""
    directory = root / layout.audit_dir
    directory.mkdir(parents=True, exist_ok=True)
    if layout is NATIVE_LAYOUT and not (directory / ".gitignore").exists():
        # Records are local state: a committed marker would clear every later checkout.
        atomic_write(directory / ".gitignore", b"*\n")
    return directory
