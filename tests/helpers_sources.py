"""Builders for the source tests: real tarballs, real git repositories, a real HTTP server."""

from __future__ import annotations

import contextlib
import functools
import http.server
import io
import shutil
import tarfile
import threading
import time
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
    builders.git(repo, "add", "-A")
    builders.git(repo, "commit", "-qm", f"release {tag}", "--allow-empty")
    if annotated:
        builders.git(repo, "tag", "-a", tag, "-m", f"release {tag}")
    else:
        builders.git(repo, "tag", tag)


def init_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    builders.git(path, "init", "-q", "-b", "main")
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


# A trickling server gives up on its own after this many seconds, so that a client without
# tether's time bound fails a test (with another message) instead of hanging it.
GIVE_UP = 10.0


class _DumbGit(http.server.SimpleHTTPRequestHandler):
    """A bare repository served as static files (git's plain HTTP protocol). ``slow`` is the
    path part whose answers trickle: one byte every 50 ms, for ``GIVE_UP`` seconds at most."""

    slow = ""
    protocol_version = "HTTP/1.0"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if not self.slow or self.slow not in self.path:
            super().do_GET()
            return
        path = Path(self.translate_path(self.path.split("?")[0]))
        data = path.read_bytes() if path.is_file() else b"0" * 1000
        with contextlib.suppress(OSError):
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            stop = time.monotonic() + GIVE_UP
            for byte in data:
                if time.monotonic() > stop:
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.05)


@contextlib.contextmanager
def serve_bare_repository(bare: Path, slow: str = "") -> Iterator[str]:
    """Serve the bare repository ``bare`` (made ready with ``update-server-info``) over
    git's plain HTTP protocol on 127.0.0.1; the answers for paths holding ``slow`` trickle.
    Yields the repository's URL."""
    handler = type("Handler", (_DumbGit,), {"slow": slow})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0),
        lambda *a: handler(*a, directory=str(bare.parent)),  # type: ignore[misc]
    )
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/{bare.name}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def bare_for_http(repo: Path, bare: Path) -> Path:
    """A bare clone of ``repo`` at ``bare``, packed and ready to be served as plain files."""
    builders.git(repo.parent, "clone", "-q", "--bare", str(repo), str(bare))
    builders.git(bare, "repack", "-adq")
    builders.git(bare, "update-server-info")
    return bare


def listing(folder: Path) -> list[str]:
    """Everything under ``folder`` (hidden files included), or [] when it does not exist."""
    if not folder.exists():
        return []
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


class GitHubReleases:
    """GitHub's REST API for one repository's releases, served on 127.0.0.1 by
    ``serve_github_releases``: the release list (paginated as GitHub pages it), a release by
    its tag, and each asset's download, which answers with a redirect to a storage path as
    GitHub's does. ``assets`` is a folder of the assets' files; ``bodies`` tag -> the notes
    published with it. Each request is recorded as (path, its headers). ``fail_listing``
    answers the release list with HTTP 500. It imitates the API's answers, never GitHub."""

    def __init__(
        self, repo: str, assets: Path, bodies: dict[str, str], fail_listing: bool = False
    ) -> None:
        self.repo = repo
        self.assets = assets
        self.bodies = bodies
        self.fail_listing = fail_listing
        self.requests: list[tuple[str, dict[str, str]]] = []

    def _asset_files(self) -> list[Path]:
        return sorted(self.assets.iterdir()) if self.assets.is_dir() else []

    def release(self, tag: str) -> dict[str, object]:
        files = self._asset_files()
        assets = [
            {"id": index, "name": path.name}
            for index, path in enumerate(files, 1)
            if path.name.endswith(f"-{tag}.tar.gz")
        ]
        return {"tag_name": tag, "body": self.bodies[tag], "draft": False, "assets": assets}

    def answer(self, path: str) -> tuple[int, dict[str, str], bytes]:
        import json
        import urllib.parse

        parts = urllib.parse.urlsplit(path)
        base = f"/repos/{self.repo}/releases"
        if parts.path == base:
            if self.fail_listing:
                return 500, {}, b'{"message": "Server Error"}'
            page = int(urllib.parse.parse_qs(parts.query).get("page", ["1"])[0])
            listed = [self.release(tag) for tag in self.bodies] if page == 1 else []
            return 200, {"Content-Type": "application/json"}, json.dumps(listed).encode()
        if parts.path.startswith(base + "/tags/"):
            tag = urllib.parse.unquote(parts.path.removeprefix(base + "/tags/"))
            if tag not in self.bodies:
                return 404, {}, b'{"message": "Not Found"}'
            return 200, {"Content-Type": "application/json"}, json.dumps(self.release(tag)).encode()
        if parts.path.startswith(base + "/assets/"):
            index = int(parts.path.rsplit("/", 1)[1])
            name = self._asset_files()[index - 1].name
            return 302, {"Location": f"/storage/{name}"}, b""
        if parts.path.startswith("/storage/"):
            return 200, {}, (self.assets / parts.path.removeprefix("/storage/")).read_bytes()
        return 404, {}, b""


@contextlib.contextmanager
def serve_github_releases(api: GitHubReleases) -> Iterator[str]:
    """Serve ``api`` over HTTP on 127.0.0.1 in a thread; yields the base URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            api.requests.append((self.path, dict(self.headers.items())))
            status, headers, body = api.answer(self.path)
            self.send_response(status)
            for name, value in {**headers, "Content-Length": str(len(body))}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
