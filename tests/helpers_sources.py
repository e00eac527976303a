"""Builders for the source tests: real tarballs, real git repositories, a real HTTP server."""

from __future__ import annotations

import contextlib
import functools
import http.server
import io
import shutil
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import builders

Entry = tuple[tarfile.TarInfo, bytes | None]


def file_entry(name: str, data: bytes | str = b"", mode: int = 0o644) -> Entry:
    payload = data.encode() if isinstance(data, str) else data
    info = tarfile.TarInfo(name)
    info.size = len(payload)
    info.mode = mode
    return info, payload


def dir_entry(name: str) -> Entry:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = 0o755
    return info, None


def symlink_entry(name: str, target: str) -> Entry:
    info = tarfile.TarInfo(name)
    info.type = tarfile.SYMTYPE
    info.linkname = target
    return info, None


def hardlink_entry(name: str, target: str) -> Entry:
    info = tarfile.TarInfo(name)
    info.type = tarfile.LNKTYPE
    info.linkname = target
    return info, None


def special_entry(name: str, kind: bytes) -> Entry:
    info = tarfile.TarInfo(name)
    info.type = kind
    return info, None


def write_tar(path: Path, entries: list[Entry]) -> Path:
    """A tar file with exactly these entries (gzip when the name says so)."""
    mode = "w:gz" if path.name.endswith((".gz", ".tgz")) else "w"
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, mode) as tar:  # type: ignore[call-overload]
        for info, payload in entries:
            tar.addfile(info, io.BytesIO(payload) if payload is not None else None)
    return path


def release_tar(path: Path, files: dict[str, str], top: str | None = None) -> Path:
    """A release tarball of ``files``, optionally wrapped in one ``top`` folder."""
    prefix = f"{top}/" if top else ""
    entries = [dir_entry(top)] if top else []
    entries += [file_entry(prefix + name, text) for name, text in files.items()]
    return write_tar(path, entries)


def read_tree(root: Path) -> dict[str, str]:
    """Relative path -> text of every regular file under ``root``."""
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def git(*args: str, cwd: Path) -> str:
    return builders.git(cwd, *args)


def commit_release(repo: Path, files: dict[str, str], tag: str, annotated: bool = False) -> None:
    """Make the working tree hold exactly ``files``, commit it and tag it."""
    for existing in repo.iterdir():
        if existing.name == ".git":
            continue
        if existing.is_dir():
            shutil.rmtree(existing)
        else:
            existing.unlink()
    for name, text in files.items():
        target = repo / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git("add", "-A", cwd=repo)
    git("commit", "-qm", f"release {tag}", "--allow-empty", cwd=repo)
    if annotated:
        git("tag", "-a", tag, "-m", f"release {tag}", cwd=repo)
    else:
        git("tag", tag, cwd=repo)


def init_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", "main", cwd=path)
    return path


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def serve_directory(root: Path) -> Iterator[str]:
    """Serve ``root`` over HTTP on 127.0.0.1 in a thread; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # A short poll interval: shutdown() waits for one poll, and tests must stay fast.
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def listing(folder: Path) -> list[str]:
    """Everything under ``folder`` (hidden files included), or [] when it does not exist."""
    if not folder.exists():
        return []
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))
