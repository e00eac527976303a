"""`tether release pack`: reproducible tarballs, their `.sha256`, and the checks around them."""

from __future__ import annotations

import hashlib
import json
import os
import tarfile

import pytest

from builders import call, git, write_files
from tether.checksums import expected_digest, verify_tarball_checksum
from tether.sources import open_source

CONFIG = """\
name = "acme-kit"
version = "2.0.0"
default_class = "owned"
sentinels = ["CHANGELOG.md", "wiki/hot.md"]
exclude = ["internal/**"]

[classes]
shared = ["docs/**"]
"""

FILES = {
    "tether.toml": CONFIG,
    "CHANGELOG.md": "## [2.0.0]\n- big\n",
    "docs/guide.md": "guide\n",
    "docs/deep/er/note.md": "note\n",
    "bin/lint.sh": "#!/bin/sh\necho lint\n",
    "internal/secret.txt": "secret\n",
}


@pytest.fixture
def upstream(tmp_path):
    repo = tmp_path / "upstream"
    write_files(repo, FILES)
    os.chmod(repo / "bin/lint.sh", 0o775)
    os.chmod(repo / "docs/guide.md", 0o600)  # group/other bits must not leak into the tarball
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "release")
    assert call("manifest", "build", "-C", str(repo)) == 0
    return repo


def pack(repo, out, *extra):
    return call("release", "pack", "--version", "2.0.0", "--out", str(out), *extra, "-C", str(repo))


def test_two_packs_at_different_times_are_byte_identical(upstream, tmp_path):
    assert pack(upstream, tmp_path / "one") == 0
    # Different mtimes, a different umask-style mode on a group bit, a later clock.
    for path in upstream.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            os.utime(path, (1_900_000_000, 1_900_000_000))
    os.chmod(upstream / "docs/guide.md", 0o664)
    assert pack(upstream, tmp_path / "two") == 0
    one = (tmp_path / "one/acme-kit-v2.0.0.tar.gz").read_bytes()
    two = (tmp_path / "two/acme-kit-v2.0.0.tar.gz").read_bytes()
    assert one == two
    assert (tmp_path / "one/acme-kit-v2.0.0.tar.gz.sha256").read_bytes() == (
        tmp_path / "two/acme-kit-v2.0.0.tar.gz.sha256"
    ).read_bytes()


def test_tarball_layout_and_metadata(upstream, tmp_path):
    assert pack(upstream, tmp_path) == 0
    tarball = tmp_path / "acme-kit-v2.0.0.tar.gz"
    raw = tarball.read_bytes()
    assert raw[4:8] == b"\0\0\0\0"  # gzip header time
    assert raw[3] & 0x08 == 0  # no file name in the gzip header
    with tarfile.open(tarball) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names)
    top = "acme-kit-v2.0.0"
    assert {n for n in names if not tar_is_dir(members, n)} == {
        f"{top}/.tether/manifest.json",
        f"{top}/CHANGELOG.md",  # a shipped sentinel; wiki/hot.md does not exist, so not shipped
        f"{top}/bin/lint.sh",
        f"{top}/docs/deep/er/note.md",
        f"{top}/docs/guide.md",
    }
    assert all(m.mtime == 0 and m.uid == 0 and m.gid == 0 for m in members)
    assert all(m.uname == "" and m.gname == "" for m in members)
    modes = {m.name: m.mode for m in members}
    assert modes[f"{top}/bin/lint.sh"] == 0o755
    assert modes[f"{top}/docs/guide.md"] == 0o644
    assert modes[f"{top}/docs/deep/er"] == 0o755


def tar_is_dir(members, name):
    return next(m for m in members if m.name == name).isdir()


def test_sha256_file_verifies_and_detects_tampering(upstream, tmp_path):
    assert pack(upstream, tmp_path) == 0
    tarball = tmp_path / "acme-kit-v2.0.0.tar.gz"
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    assert (tmp_path / "acme-kit-v2.0.0.tar.gz.sha256").read_text() == f"{digest}  {tarball.name}\n"
    assert verify_tarball_checksum(tarball) is True
    tarball.write_bytes(tarball.read_bytes() + b"\0")
    assert verify_tarball_checksum(tarball) is False
    (tmp_path / "acme-kit-v2.0.0.tar.gz.sha256").unlink()
    assert verify_tarball_checksum(tarball) is None


def test_packed_release_installs_through_the_tarball_source(upstream, tmp_path):
    out = tmp_path / "dist"
    assert pack(upstream, out) == 0
    source = open_source(str(out / "acme-kit-{tag}.tar.gz"), tmp_path / "cache")
    assert source.available_versions() == ["2.0.0"]
    root = source.fetch("2.0.0").root
    manifest = json.loads((root / ".tether/manifest.json").read_text())
    assert set(manifest["files"]) == {"bin/lint.sh", "docs/deep/er/note.md", "docs/guide.md"}
    assert (root / "CHANGELOG.md").is_file()
    assert not (root / "internal").exists()


def test_version_mismatch_is_refused(upstream, tmp_path, capsys):
    code = call(
        "release", "pack", "--version", "2.1.0", "--out", str(tmp_path / "d"), "-C", str(upstream)
    )
    assert code == 1
    assert "2.1.0 differs from the manifest's version 2.0.0" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


def test_stale_manifest_is_refused(upstream, tmp_path, capsys):
    write_files(upstream, {"docs/new.md": "new\n"})
    git(upstream, "add", "docs/new.md")
    assert pack(upstream, tmp_path / "d") == 1
    assert "stale" in capsys.readouterr().err


def test_default_out_dir_and_json(upstream, capsys):
    capsys.readouterr()
    assert call("release", "pack", "--version", "v2.0.0", "--json", "-C", str(upstream)) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["tarball"] == str(upstream / "dist/acme-kit-v2.0.0.tar.gz")
    assert (doc["top_dir"], doc["files"]) == ("acme-kit-v2.0.0", 5)
    assert len(doc["sha256"]) == 64


def test_links_inside_are_packed_and_escaping_links_refused(upstream, tmp_path, capsys):
    os.symlink("guide.md", upstream / "docs/alias.md")
    git(upstream, "add", "docs/alias.md")
    assert call("manifest", "build", "-C", str(upstream)) == 0
    assert pack(upstream, tmp_path / "ok") == 0
    with tarfile.open(tmp_path / "ok/acme-kit-v2.0.0.tar.gz") as tar:
        link = tar.getmember("acme-kit-v2.0.0/docs/alias.md")
    assert link.issym() and link.linkname == "guide.md"

    os.unlink(upstream / "docs/alias.md")
    os.symlink("../../outside.md", upstream / "docs/alias.md")
    assert pack(upstream, tmp_path / "bad") == 1
    assert "outside the release" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "digest"),
    [
        ("A" * 64 + "  kit.tar.gz\n", "a" * 64),
        ("b" * 64 + " *kit.tar.gz\n", "b" * 64),
        ("c" * 64 + "\n", "c" * 64),
        ("c" * 64 + "  renamed-on-download.tar.gz\n", "c" * 64),
        ("SHA256 (kit.tar.gz) = " + "d" * 64 + "\n", "d" * 64),
        ("e" * 64 + "  other.tar.gz\n" + "f" * 64 + "  kit.tar.gz\n", "f" * 64),
        ("e" * 64 + "  other.tar.gz\n" + "f" * 64 + "  more.tar.gz\n", None),
        ("not a checksum\n", None),
        ("", None),
    ],
)
def test_checksum_file_formats(text, digest):
    assert expected_digest(text, "kit.tar.gz") == digest


def test_human_lines_name_the_tarball_checksum_and_digest(upstream, capsys):
    """report/publish.py words the pack: the folder and count, both files, the digest."""
    capsys.readouterr()
    assert call("release", "pack", "--version", "2.0.0", "-C", str(upstream)) == 0
    tarball = upstream / "dist/acme-kit-v2.0.0.tar.gz"
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    assert capsys.readouterr().out.splitlines() == [
        "packed acme-kit-v2.0.0 (5 files)",
        f"  {tarball}",
        f"  {tarball}.sha256",
        f"  sha256 {digest}",
    ]
