"""Hostile releases, carried as a tarball and as a folder on a directory shelf, given to
``init`` and to ``update``: each is refused with one line naming the release and the member,
or handled, and either way nothing outside the project is created, changed or removed.

A folder release obeys the rules an archive does (tether.sources.members), in the same
words. Some hostile shapes exist only in one carrier (a folder cannot hold two entries of one
name, a tar file cannot hold a socket); the table says so where a carrier is missing. Every
command is a real process with a timeout: a release that makes tether wait forever fails the
test instead of hanging the suite (a child forked from the test's process: the CLI's entry
point, without an interpreter start per case).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import subprocess
import tarfile
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from builders import call, run_forked, tree_digest
from helpers_sources import (
    Entry,
    dir_entry,
    file_entry,
    hardlink_entry,
    special_entry,
    symlink_entry,
    write_tar,
)

GOOD, HOSTILE = "1.0.0", "2.0.0"
GUIDE, README = "docs/guide.md", "README.md"
SECRET = "a secret beside the shelf\n"
MANIFEST = ".tether/manifest.json"
TIMEOUT = 30  # seconds; every case here finishes in about one
# The 50,000-file trees take ~8 s on an idle 2-core machine and several times that when the
# suite's workers share it; the bound still tells a hang from slow work.
LARGE_TIMEOUT = 180
LIMIT = 512 * 1024 * 1024  # tether.sources.limits.DEFAULT_MAX_ENTRY_BYTES

Listed = dict[str, object]


def files_of(version: str) -> dict[str, str]:
    return {GUIDE: f"guide {version}\n", README: "read me\n"}


def manifest_of(version: str, listed: Listed | None = None) -> str:
    listed = listed if listed is not None else {p: "shared" for p in files_of(version)}
    return json.dumps(
        {"schema_version": 1, "name": "acme-kit", "version": version, "files": listed}
    )


# --- the two carriers ---------------------------------------------------------------------


@dataclass
class Where:
    """Where the test's trees live: the release being built, and the sentinel tree beside
    the project (its secret is what a link leading out would smuggle in)."""

    release: Path  # a folder release's folder (unused for a tarball)
    outside: Path

    @property
    def secret(self) -> Path:
        return self.outside / "secret.txt"


TarCase = Callable[[Where], list[Entry]]
FolderCase = Callable[[Where], None]


def tar_release(
    version: str,
    *,
    drop: tuple[str, ...] = (),
    listed: Listed | None = None,
    extra: tuple[Entry, ...] = (),
) -> list[Entry]:
    """The entries of a release tarball: manifest, files (minus ``drop``), then ``extra``."""
    entries = [] if MANIFEST in drop else [file_entry(MANIFEST, manifest_of(version, listed))]
    entries += [file_entry(p, text) for p, text in files_of(version).items() if p not in drop]
    return entries + list(extra)


def folder_release(root: Path, version: str, listed: Listed | None = None) -> None:
    for rel, text in {**files_of(version), MANIFEST: manifest_of(version, listed)}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def replaced(where: Where, rel: str, make: Callable[[Path], None]) -> None:
    """The folder release with ``rel`` replaced by what ``make`` puts there."""
    folder_release(where.release, HOSTILE)
    (where.release / rel).unlink()
    make(where.release / rel)


def relative_link_to(target: Path) -> Callable[[Path], None]:
    return lambda path: os.symlink(os.path.relpath(target, path.parent), path)


def bind_socket(path: Path) -> None:
    # A socket's path must be short: bind by a relative name from inside its folder.
    here = os.getcwd()
    os.chdir(path.parent)
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(path.name)
    finally:
        os.chdir(here)


def device_node(kind: int, numbers: int) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        if os.geteuid() != 0:
            pytest.skip("creating a device node needs root")
        os.mknod(path, kind | 0o600, numbers)

    return make


def sparse_file(size: int) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        with open(path, "wb") as out:
            out.truncate(size)  # a hole: costs no disk

    return make


def sparse_tar(path: Path, entries: list[Entry], big: str, size: int) -> None:
    """A tarball whose last member is ``size`` bytes of zeros stored as a hole in the tar
    file itself, so the archive costs no disk either."""
    with open(path, "wb") as out:
        for info, payload in entries:
            out.write(info.tobuf())
            data = payload or b""
            out.write(data + b"\0" * (-len(data) % tarfile.BLOCKSIZE))
        info = tarfile.TarInfo(big)
        info.size = size
        out.write(info.tobuf())
        out.seek(size, os.SEEK_CUR)
        out.write(b"\0" * (2 * tarfile.BLOCKSIZE))  # the end-of-archive marker


NFC = unicodedata.normalize("NFC", "docs/café.md")
NFD = unicodedata.normalize("NFD", "docs/café.md")
NEWLINE = "docs/x\ntether: all clean.md"
BIG = "docs/big.bin"
GIB = 1 << 30


@dataclass(frozen=True)
class Hostile:
    tar: TarCase | None  # None: a tar file cannot carry this (see the comment on the case)
    folder: FolderCase | None  # None: a folder cannot hold this
    # What the refusal says (per carrier when they differ); None: the release is handled.
    refused: str | dict[str, str] | None
    handled: Callable[[Path, Where], None] | None = None  # checks the installed project

    def refusal(self, carrier: str) -> str | None:
        if isinstance(self.refused, dict):
            return self.refused.get(carrier)
        return self.refused


def guide_is(expected: Callable[[Where], str]) -> Callable[[Path, Where], None]:
    def check(project: Path, where: Where) -> None:
        assert (project / GUIDE).read_text() == expected(where)
        assert not (project / GUIDE).is_symlink()

    return check


def only_readme_installed(project: Path, where: Where) -> None:
    assert (project / README).read_text() == "read me\n"
    assert "readme.md" not in os.listdir(project)


def release_folder_through_a_link(where: Where) -> None:
    # The shelf's version folder is a link to a folder elsewhere: like a tarball reached
    # through a link, the container may be anywhere; what is inside obeys the rules.
    real = where.outside.parent / "elsewhere" / HOSTILE
    folder_release(real, HOSTILE)
    os.symlink(real, where.release)


CASES: dict[str, Hostile] = {
    # On disk a name cannot hold "..", nor start at "/": those are tar-only.
    "member named with ..": Hostile(
        lambda w: tar_release(HOSTILE, extra=(file_entry("../planted.txt", "x"),)),
        None,
        "member '../planted.txt' has an unsafe name (path contains '..')",
    ),
    "absolute member": Hostile(
        lambda w: tar_release(HOSTILE, extra=(file_entry(str(w.outside / "planted"), "x"),)),
        None,
        "has an absolute name",
    ),
    "manifest source with ..": Hostile(
        lambda w: tar_release(HOSTILE, listed={GUIDE: {"src": "../outside/secret.txt"}}),
        lambda w: folder_release(w.release, HOSTILE, {GUIDE: {"src": "../outside/secret.txt"}}),
        "'../outside/secret.txt': path contains '..'",
    ),
    "manifest path absolute": Hostile(
        lambda w: tar_release(HOSTILE, listed={str(w.outside / "planted"): "shared"}),
        lambda w: folder_release(w.release, HOSTILE, {str(w.outside / "planted"): "shared"}),
        "path is absolute",
    ),
    "symlink leading out": Hostile(
        lambda w: tar_release(
            HOSTILE, drop=(GUIDE,), extra=(symlink_entry(GUIDE, "../../outside/secret.txt"),)
        ),
        lambda w: replaced(w, GUIDE, relative_link_to(w.secret)),
        f"member {GUIDE!r} is a symlink leading outside the tree",
    ),
    "symlink to an absolute path": Hostile(
        lambda w: tar_release(HOSTILE, drop=(GUIDE,), extra=(symlink_entry(GUIDE, str(w.secret)),)),
        lambda w: replaced(w, GUIDE, lambda p: os.symlink(w.secret, p)),
        f"member {GUIDE!r} is a symlink to the absolute path",
    ),
    "symlink chain leading out": Hostile(
        lambda w: tar_release(
            HOSTILE, extra=(symlink_entry("a", "."), symlink_entry("b", "a/../../outside"))
        ),
        lambda w: (
            folder_release(w.release, HOSTILE),
            os.symlink(".", w.release / "a"),
            os.symlink("a/../../outside", w.release / "b"),
        ),
        "member 'b' is a symlink leading outside the tree ('a/../../outside')",
    ),
    "link to /dev/zero at a shipped path": Hostile(
        lambda w: tar_release(HOSTILE, drop=(GUIDE,), extra=(symlink_entry(GUIDE, "/dev/zero"),)),
        lambda w: replaced(w, GUIDE, lambda p: os.symlink("/dev/zero", p)),
        f"member {GUIDE!r} is a symlink to the absolute path '/dev/zero'",
    ),
    "manifest is a link to /dev/zero": Hostile(
        lambda w: tar_release(
            HOSTILE, drop=(MANIFEST,), extra=(symlink_entry(MANIFEST, "/dev/zero"),)
        ),
        lambda w: replaced(w, MANIFEST, lambda p: os.symlink("/dev/zero", p)),
        f"member {MANIFEST!r} is a symlink to the absolute path '/dev/zero'",
    ),
    # A hard link in a tar file names another path; on disk it is one more name of a file
    # already in the folder (made by someone who could read it), so its bytes are the
    # release's, as a copy would be.
    "hard link leading out": Hostile(
        lambda w: tar_release(
            HOSTILE, drop=(GUIDE,), extra=(hardlink_entry(GUIDE, "../outside/secret.txt"),)
        ),
        lambda w: replaced(w, GUIDE, lambda p: os.link(w.secret, p)),
        {"tar": f"member {GUIDE!r} is a hardlink pointing outside the tree"},
        guide_is(lambda w: SECRET),
    ),
    "fifo at a shipped path": Hostile(
        lambda w: tar_release(
            HOSTILE, drop=(GUIDE,), extra=(special_entry(GUIDE, tarfile.FIFOTYPE),)
        ),
        lambda w: replaced(w, GUIDE, os.mkfifo),
        f"member {GUIDE!r} is a fifo, which a release may not contain",
    ),
    "fifo as the manifest": Hostile(
        lambda w: tar_release(
            HOSTILE, drop=(MANIFEST,), extra=(special_entry(MANIFEST, tarfile.FIFOTYPE),)
        ),
        lambda w: replaced(w, MANIFEST, os.mkfifo),
        f"member {MANIFEST!r} is a fifo, which a release may not contain",
    ),
    "character device": Hostile(
        lambda w: tar_release(HOSTILE, extra=(special_entry("docs/zero", tarfile.CHRTYPE),)),
        lambda w: (
            folder_release(w.release, HOSTILE),
            device_node(stat.S_IFCHR, os.stat("/dev/zero").st_rdev)(w.release / "docs/zero"),
        ),
        "member 'docs/zero' is a character device, which a release may not contain",
    ),
    "block device": Hostile(
        lambda w: tar_release(HOSTILE, extra=(special_entry("docs/disk", tarfile.BLKTYPE),)),
        lambda w: (
            folder_release(w.release, HOSTILE),
            device_node(stat.S_IFBLK, os.makedev(7, 0))(w.release / "docs/disk"),
        ),
        "member 'docs/disk' is a block device, which a release may not contain",
    ),
    # A tar file has no entry type for a socket.
    "socket": Hostile(
        None,
        lambda w: (folder_release(w.release, HOSTILE), bind_socket(w.release / "docs/sock")),
        "member 'docs/sock' is a socket, which a release may not contain",
    ),
    # A folder cannot hold two entries of one name, nor a file below a file.
    "duplicate member": Hostile(
        lambda w: tar_release(HOSTILE, extra=(file_entry(GUIDE, "second\n"),)),
        None,
        f"member {GUIDE!r} appears more than once",
    ),
    "member below a file": Hostile(
        lambda w: tar_release(HOSTILE, extra=(file_entry(f"{GUIDE}/inner.md", "x"),)),
        None,
        f"lies inside the file {GUIDE!r}",
    ),
    "path listed as a file and a folder": Hostile(
        lambda w: tar_release(HOSTILE, listed={"docs": "shared", GUIDE: "shared"}),
        lambda w: folder_release(w.release, HOSTILE, {"docs": "shared", GUIDE: "shared"}),
        "'docs' is listed as a file and as a folder",
    ),
    "case-fold twins listed": Hostile(
        lambda w: tar_release(
            HOSTILE,
            listed={GUIDE: "shared", README: "shared", "readme.md": "shared"},
            extra=(file_entry("readme.md", "twin\n"),),
        ),
        lambda w: (
            folder_release(w.release, HOSTILE, {README: "shared", "readme.md": "shared"}),
            (w.release / "readme.md").write_text("twin\n"),
        ),
        "collide on case-insensitive filesystems",
    ),
    "case-fold twin not listed": Hostile(
        lambda w: tar_release(
            HOSTILE, listed={README: "shared"}, extra=(file_entry("readme.md", "twin\n"),)
        ),
        lambda w: (
            folder_release(w.release, HOSTILE, {README: "shared"}),
            (w.release / "readme.md").write_text("twin\n"),
        ),
        None,
        only_readme_installed,
    ),
    "NFC and NFD twins": Hostile(
        lambda w: tar_release(
            HOSTILE,
            listed={NFC: "shared", NFD: "shared"},
            extra=(file_entry(NFC, "composed\n"), file_entry(NFD, "decomposed\n")),
        ),
        lambda w: (
            folder_release(w.release, HOSTILE, {NFC: "shared", NFD: "shared"}),
            (w.release / NFC).write_text("composed\n"),
            (w.release / NFD).write_text("decomposed\n"),
        ),
        "collide on case-insensitive filesystems",
    ),
    "name with a newline": Hostile(
        lambda w: tar_release(
            HOSTILE, listed={NEWLINE: "shared"}, extra=(file_entry(NEWLINE, "x\n"),)
        ),
        lambda w: (
            folder_release(w.release, HOSTILE, {NEWLINE: "shared"}),
            (w.release / NEWLINE).write_text("x\n"),
        ),
        f"member {NEWLINE!r} has an unsafe name (path contains a control character)",
    ),
    "1 GB sparse file": Hostile(
        lambda w: tar_release(HOSTILE),  # the big member is added by sparse_tar
        lambda w: (folder_release(w.release, HOSTILE), sparse_file(GIB)(w.release / BIG)),
        f"member {BIG!r} is {GIB} bytes, over the limit of {LIMIT}",
    ),
    # Controls: a link that stays inside the release is followed, as an archive's is.
    "symlink staying inside": Hostile(
        lambda w: tar_release(
            HOSTILE, drop=(GUIDE,), extra=(symlink_entry(GUIDE, "../README.md"),)
        ),
        lambda w: replaced(w, GUIDE, lambda p: os.symlink("../README.md", p)),
        None,
        guide_is(lambda w: "read me\n"),
    ),
    "release folder reached through a link": Hostile(
        None,  # a tarball path may be a link too; tarball sources never refused that
        release_folder_through_a_link,
        None,
        guide_is(lambda w: f"guide {HOSTILE}\n"),
    ),
}


# --- running one case ---------------------------------------------------------------------


@dataclass
class Setup:
    tmp: Path
    carrier: str
    project: Path
    where: Where

    @property
    def source(self) -> str:
        if self.carrier == "tar":
            return str(self.tmp / "tarballs" / "app-{version}.tar")
        return str(self.tmp / "shelf")


def build(tmp: Path, carrier: str, case: str) -> Setup:
    hostile = CASES[case]
    outside = tmp / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    (outside / "victim.txt").write_text("must stay as it is\n")
    setup = Setup(tmp, carrier, tmp / "proj", Where(tmp / "shelf" / HOSTILE, outside))
    if carrier == "tar":
        folder = tmp / "tarballs"
        write_tar(folder / f"app-{GOOD}.tar", tar_release(GOOD))
        maker = hostile.tar
        assert maker is not None
        entries = maker(setup.where)
        if case == "1 GB sparse file":
            sparse_tar(folder / f"app-{HOSTILE}.tar", entries, BIG, GIB)
        else:
            write_tar(folder / f"app-{HOSTILE}.tar", entries)
    else:
        folder_release(tmp / "shelf" / GOOD, GOOD)
        make = hostile.folder
        assert make is not None
        setup.where.release.parent.mkdir(parents=True, exist_ok=True)
        make(setup.where)
    return setup


def outside_digest(tmp: Path, project: Path, *, by_stat: bool = False) -> dict[str, object]:
    """Everything beside the project (shelf, tarballs, the sentinel tree), looked at without
    opening anything that is not a regular file and without following links. ``by_stat``:
    a regular file by its inode, size and modification time instead of its bytes (a write
    changes the time; for trees too large to read twice)."""
    found: dict[str, object] = {}
    top = str(tmp)
    # Plain strings, not Path objects: this walks trees of 50,000 files.
    for dirpath, dirnames, filenames in os.walk(top):
        if dirpath == top:
            dirnames[:] = [d for d in dirnames if tmp / d != project]
        prefix = os.path.relpath(dirpath, top) + os.sep if dirpath != top else ""
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            info = os.lstat(path)
            key = prefix + name
            if stat.S_ISLNK(info.st_mode):
                found[key] = ("link", os.readlink(path))
            elif stat.S_ISREG(info.st_mode) and by_stat:
                found[key] = ("file", info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns)
            elif stat.S_ISREG(info.st_mode) and info.st_size < (1 << 20):
                found[key] = (
                    "file",
                    info.st_mode,
                    hashlib.sha256(Path(path).read_bytes()).hexdigest(),
                )
            elif stat.S_ISREG(info.st_mode):  # the sparse GiB: its size and times vouch
                found[key] = ("big", info.st_mode, info.st_size, info.st_mtime_ns)
            else:
                found[key] = ("other", info.st_mode, info.st_rdev)
    return found


def project_digest(project: Path) -> dict[str, bytes]:
    """The project's files, but for what tether keeps for itself and git ignores: the lock
    file any run leaves, and the cache of unpacked releases (a tarball whose members pass
    but whose manifest is refused stays cached, as the source serves it)."""
    found = tree_digest(project) if project.exists() else {}
    found.pop(".tether/lock", None)
    found.pop(".tether/gbrain/lock", None)
    # gbrain's run lock, held by every refresh (in the recipe's target root)
    found.pop(".gbrain-source.refresh.lock", None)
    found.pop("tools/gbrain/.gbrain-source.refresh.lock", None)
    return {k: v for k, v in found.items() if not k.startswith(".tether/cache/releases/")}


def run(*args: str, timeout: int = TIMEOUT) -> subprocess.CompletedProcess[str]:
    return run_forked(*args, timeout=timeout)


def attempt(setup: Setup, command: str) -> subprocess.CompletedProcess[str]:
    project = str(setup.project)
    if command == "init":
        return run("init", "--source", setup.source, "--to", HOSTILE, "-C", project)
    return run("update", "--yes", "--to", HOSTILE, "-C", project)


def prepare(setup: Setup, command: str) -> None:
    if command == "update":
        args = ("init", "--source", setup.source, "--to", GOOD, "-C", str(setup.project))
        assert call(*args) == 0


def assert_outcome(
    setup: Setup, hostile: Hostile, result: subprocess.CompletedProcess[str], before: object
) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    refusal = hostile.refusal(setup.carrier)
    if refusal is None:
        assert result.returncode == 0, result.stderr
        assert hostile.handled is not None
        hostile.handled(setup.project, setup.where)
        return
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stderr.startswith("tether: ") and result.stderr.count("\n") == 1, result.stderr
    assert refusal in result.stderr
    assert project_digest(setup.project) == before, "a refused release changed the project"


PARAMS = [
    pytest.param(case, carrier, command, id=f"{case}-{carrier}-{command}")
    for case, hostile in CASES.items()
    for carrier in ("tar", "folder")
    if (hostile.tar if carrier == "tar" else hostile.folder) is not None
    for command in ("init", "update")
]


@pytest.mark.parametrize(("case", "carrier", "command"), PARAMS)
def test_hostile_release(tmp_path: Path, case: str, carrier: str, command: str) -> None:
    setup = build(tmp_path, carrier, case)
    prepare(setup, command)
    outside = outside_digest(tmp_path, setup.project)
    before = project_digest(setup.project)
    result = attempt(setup, command)
    assert_outcome(setup, CASES[case], result, before)
    assert outside_digest(tmp_path, setup.project) == outside, "something beside it changed"


def test_the_table_covers_both_carriers_for_every_rule_a_folder_can_break() -> None:
    """A case a folder can hold must be tried as a folder too: that is where the rules were
    missing. Only shapes a disk cannot hold (or tar cannot carry) may lack a carrier."""
    tar_only = {name for name, h in CASES.items() if h.folder is None}
    folder_only = {name for name, h in CASES.items() if h.tar is None}
    assert tar_only == {
        "member named with ..",
        "absolute member",
        "duplicate member",
        "member below a file",
    }
    assert folder_only == {"socket", "release folder reached through a link"}


# --- 50,000 tiny files: slower, so on its own -----------------------------------------------

MANY = 50_000


def many_files_tar(path: Path) -> None:
    """A release tarball with 50,000 one-byte files beside the two it ships. The tiny files'
    ustar headers are one header with its name and checksum rewritten each time: a
    ``TarInfo`` per file took longer than the update under test."""
    block = tarfile.BLOCKSIZE
    with open(path, "wb") as out:
        for info, payload in [*tar_release(HOSTILE), dir_entry("many")]:
            out.write(info.tobuf(tarfile.USTAR_FORMAT))
            if payload:
                out.write(payload + bytes(-len(payload) % block))
        template = tarfile.TarInfo("many")
        template.size = 1
        header = bytearray(template.tobuf(tarfile.USTAR_FORMAT))
        data = b"x" + bytes(block - 1)
        for index in range(MANY):
            name = f"many/{index // 1000}/f{index}".encode()
            header[:100] = name + bytes(100 - len(name))
            header[148:156] = b" " * 8  # the checksum counts its own field as spaces
            header[148:156] = b"%06o\0 " % sum(header)
            out.write(header)
            out.write(data)
        out.write(bytes(2 * block))  # the end of the archive


def many_files_folder(root: Path) -> None:
    folder_release(root, HOSTILE)
    for index in range(MANY):
        folder = os.path.join(root, "many", str(index // 1000))
        if index % 1000 == 0:
            os.makedirs(folder)
        descriptor = os.open(os.path.join(folder, f"f{index}"), os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(descriptor, b"x")
        os.close(descriptor)


@pytest.mark.parametrize("carrier", ["tar", "folder"])
def test_fifty_thousand_tiny_files_are_handled(tmp_path: Path, carrier: str) -> None:
    """The tree is walked (and, for a tarball, unpacked into the cache) in bounded time;
    only the files the manifest lists reach the project. Installing 50,000 listed files
    costs an fsync each: bench measures that, not this test."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("must stay as it is\n")
    if carrier == "tar":
        write_tar(tmp_path / "tarballs" / f"app-{GOOD}.tar", tar_release(GOOD))
        many_files_tar(tmp_path / "tarballs" / f"app-{HOSTILE}.tar")
        source = str(tmp_path / "tarballs" / "app-{version}.tar")
    else:
        folder_release(tmp_path / "shelf" / GOOD, GOOD)
        many_files_folder(tmp_path / "shelf" / HOSTILE)
        source = str(tmp_path / "shelf")
    project = tmp_path / "proj"
    assert call("init", "--source", source, "--to", GOOD, "-C", str(project)) == 0
    beside = outside_digest(tmp_path, project, by_stat=True)
    update = ("update", "--yes", "--json", "--to", HOSTILE, "-C", str(project))
    result = run(*update, timeout=LARGE_TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["to_version"] == HOSTILE
    assert (project / GUIDE).read_text() == f"guide {HOSTILE}\n"
    assert not (project / "many").exists()
    assert outside_digest(tmp_path, project, by_stat=True) == beside


# --- a gbrain recipe folder is a release folder too ---------------------------------------

RECIPE_BREAKS: dict[str, tuple[Callable[[Path, Path], None], str]] = {
    "symlink leading out": (
        lambda src, secret: os.symlink(os.path.relpath(secret, src.parent), src),
        "is a symlink leading outside the tree",
    ),
    "fifo": (lambda src, secret: os.mkfifo(src), "is a fifo, which a release may not contain"),
}


@pytest.mark.parametrize("case", sorted(RECIPE_BREAKS))
@pytest.mark.parametrize("command", ["init", "refresh"])
def test_hostile_recipe_folder(tmp_path: Path, case: str, command: str) -> None:
    from tests.refresh.test_gbrain_refresh import recipe

    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET)
    rec = recipe(tmp_path / "recipe", {"rules.md": ("rules\n", "0644")})
    host = tmp_path / "host"
    host.mkdir()
    init = ("init", "--profile", "gbrain", "--source", str(rec), "-C", str(host))
    if command == "refresh":
        assert call(*init) == 0
    make, refusal = RECIPE_BREAKS[case]
    (rec / "src/rules.md").unlink()
    make(rec / "src/rules.md", secret)
    beside = outside_digest(tmp_path, host)
    before = project_digest(host)
    result = run(*init) if command == "init" else run("refresh", "--yes", "-C", str(host))
    assert "Traceback" not in result.stderr
    assert result.returncode == 1, result.stderr
    assert result.stderr == (
        f"tether: refusing release folder {rec}: member 'src/rules.md' {refusal}"
        + (f" ({os.readlink(rec / 'src/rules.md')!r})" if case.startswith("symlink") else "")
        + "\n"
    )
    assert project_digest(host) == before
    assert outside_digest(tmp_path, host) == beside


@pytest.mark.parametrize("command", ["init", "update"])
def test_a_fifo_as_the_checksum_beside_a_tarball(tmp_path: Path, command: str) -> None:
    folder = tmp_path / "tarballs"
    write_tar(folder / f"app-{GOOD}.tar", tar_release(GOOD))
    write_tar(folder / f"app-{HOSTILE}.tar", tar_release(HOSTILE))
    os.mkfifo(folder / f"app-{HOSTILE}.tar.sha256")
    setup = Setup(tmp_path, "tar", tmp_path / "proj", Where(tmp_path / "unused", tmp_path))
    prepare(setup, command)
    before = project_digest(setup.project)
    result = attempt(setup, command)
    assert "Traceback" not in result.stderr
    assert result.returncode == 1
    assert result.stderr == (
        f"tether: {folder / f'app-{HOSTILE}.tar.sha256'}: cannot read (not a regular file)\n"
    )
    assert project_digest(setup.project) == before
