"""Exporting a git tag runs nothing of the source repository: no ``filter.*.smudge`` or
``filter.*.process`` program its config and ``.gitattributes`` name, no ``ident`` or
end-of-line conversion. The release is the tagged tree as committed. Real repositories,
real filters whose programs would leave a marker file."""

from __future__ import annotations

import json
import os
import shlex
import tarfile
from pathlib import Path

import pytest

from builders import git, make_release, run_tether
from helpers_sources import commit_release, init_repo, read_tree
from tether.sources import open_source
from tether.sources.gitrepo import write_tree_tar


def _declare_filters(repo: Path, marker: Path) -> None:
    """The repository's own config names programs that would run on export."""
    touch = f"touch {shlex.quote(str(marker))}"
    git(repo, "config", "filter.evil.smudge", f"{touch}; sed s/hi/EVIL/")
    git(repo, "config", "filter.evil.clean", "cat")
    git(repo, "config", "filter.proc.process", f"sh -c {shlex.quote(touch)}")
    git(repo, "config", "filter.proc.clean", "cat")


ATTRIBUTES = "*.txt filter=evil\n*.md filter=proc\n*.id ident\n*.crlf text eol=crlf\n"


def _filtered_repo(tmp_path: Path, marker: Path) -> Path:
    repo = init_repo(tmp_path / "upstream")
    commit_release(
        repo,
        {
            ".gitattributes": ATTRIBUTES,
            "a.txt": "hi\n",
            "b.md": "hi\n",
            "c.id": "$Id$\n",
            "d.crlf": "one\ntwo\n",
        },
        "v1.0.0",
    )
    _declare_filters(repo, marker)
    return repo


def test_exporting_a_tag_runs_no_filter_and_keeps_the_committed_bytes(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    repo = _filtered_repo(tmp_path, marker)
    for spec in (str(repo), f"file://{repo}"):  # in place, and through tether's clone
        tree = open_source(spec, tmp_path / f"cache-{len(spec)}").fetch("1.0.0").root
        assert read_tree(tree) == {
            ".gitattributes": ATTRIBUTES,
            "a.txt": "hi\n",
            "b.md": "hi\n",
            "c.id": "$Id$\n",
            "d.crlf": "one\ntwo\n",
        }
        assert (tree / "d.crlf").read_bytes() == b"one\ntwo\n"
    assert not marker.exists()


def _git_release(tmp_path: Path, marker: Path) -> Path:
    """A git repository of two releases (manifest and files) whose filter names a program."""
    repo = init_repo(tmp_path / "upstream")
    for version in ("1.0.0", "2.0.0"):
        shelf = tmp_path / "build"
        folder = make_release(shelf, version, {"docs/a.txt": f"hi {version}\n"})
        files = {
            rel.as_posix(): (folder / rel).read_text()
            for rel in (p.relative_to(folder) for p in folder.rglob("*") if p.is_file())
        }
        files[".gitattributes"] = "*.txt filter=evil\n"
        commit_release(repo, files, f"v{version}")
    _declare_filters(repo, marker)
    return repo


def test_init_and_update_dry_run_run_no_filter_of_a_git_source(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    repo = _git_release(tmp_path, marker)
    project = tmp_path / "app"
    project.mkdir()
    done = run_tether("init", "--source", str(repo), "--to", "1.0.0", "-C", str(project))
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert (project / "docs/a.txt").read_text() == "hi 1.0.0\n"
    dry = run_tether("update", "--dry-run", "--json", "--to", "2.0.0", "-C", str(project))
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["to_version"] == "2.0.0"
    assert not marker.exists()
    assert (project / "docs/a.txt").read_text() == "hi 1.0.0\n"


def _members(archive: Path) -> dict[str, tuple[str, int, str, bytes]]:
    """name -> (kind, permission bits, link target, bytes) of every member."""
    found = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            kind = "dir" if member.isdir() else "link" if member.issym() else "file"
            handle = tar.extractfile(member) if member.isfile() else None
            data = handle.read() if handle is not None else b""
            perm = member.mode & 0o111 if member.isfile() else 0
            found[member.name.rstrip("/")] = (kind, perm, member.linkname, data)
    return found


@pytest.mark.skipif(os.name != "posix", reason="symbolic links and modes")
def test_the_export_holds_what_git_archive_holds_without_attributes(tmp_path: Path) -> None:
    """Without attributes the two agree member for member: files, folders, executable bits,
    links (as links), a name that is not UTF-8, a submodule as an empty folder."""
    repo = init_repo(tmp_path / "upstream")
    (repo / "bin").mkdir()
    (repo / "bin/run.sh").write_text("echo hi\n")
    (repo / "bin/run.sh").chmod(0o755)
    (repo / "docs/deep").mkdir(parents=True)
    (repo / "docs/deep/guide.md").write_bytes(b"\x00binary\xff")
    os.symlink("deep/guide.md", repo / "docs/link.md")
    (repo / os.fsdecode(b"caf\xe9.txt")).write_text("latin-1 name\n")
    git(repo, "add", "-A")
    sub = git(repo, "hash-object", "-w", "--stdin").strip() or "0" * 40
    commit = git(repo, "commit-tree", git(repo, "write-tree").strip(), "-m", "x").strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{commit},vendor/sub")
    git(repo, "commit", "-qm", "release")
    git(repo, "tag", "v1.0.0")
    assert sub
    ours, theirs = tmp_path / "ours.tar", tmp_path / "theirs.tar"
    write_tree_tar(repo, "refs/tags/v1.0.0", ours)
    git(repo, "archive", "--format=tar", f"--output={theirs}", "v1.0.0")
    assert _members(ours) == _members(theirs)
    assert _members(ours)["docs/link.md"][:3] == ("link", 0, "deep/guide.md")
    assert _members(ours)["vendor/sub"][0] == "dir"
