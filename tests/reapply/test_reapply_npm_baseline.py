"""The release the patches were saved from, fetched by tether from an npm registry
(``npm:<package>@<version>``) as the baseline. The registry is a loopback HTTP server
serving a package document and a real gzipped tarball, as the npm registry does."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from helpers_sources import serve_directory
from reapply_builders import (
    PLANNER,
    PLANNER_MERGED,
    PLANNER_OURS,
    PLANNER_V1,
    PLANNER_V2,
    Gsd,
    make_gsd,
    reapply_json,
    write,
)
from tether.cli import main as cli_main

PACKAGE = "get-shit-done-cc"


def npm_tarball(files: dict[str, str]) -> bytes:
    """A package tarball as ``npm pack`` writes it: every member under ``package/``."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for rel, text in {"package.json": '{"name": "get-shit-done-cc"}\n', **files}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"package/{rel}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def publish(root: Path, base: str, versions: dict[str, bytes], *, tamper: bool = False) -> None:
    """The package document at ``<registry>/<package>`` and the tarballs it points to."""
    document: dict[str, object] = {"name": PACKAGE, "versions": {}}
    for version, data in versions.items():
        name = f"tarballs/{PACKAGE}-{version}.tgz"
        write_bytes(root / name, data + (b"x" if tamper else b""))
        integrity = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
        dist = {"tarball": f"{base}/{name}", "integrity": integrity}
        document["versions"][version] = {"version": version, "dist": dist}  # type: ignore[index]
    write_bytes(root / PACKAGE, json.dumps(document).encode())


def write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, str]]:
    root = tmp_path / "registry"
    root.mkdir()
    with serve_directory(root) as base:
        monkeypatch.setenv("npm_config_registry", base + "/")
        yield root, base


def no_baseline_but_npm(tmp_path: Path) -> Gsd:
    """A GSD 1.42-style install: gsd-pristine/ holds the new release, so it has drifted."""
    gsd = make_gsd(tmp_path / "gsd", {PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2)})
    write(gsd.pristine, {PLANNER: PLANNER_V2})
    return gsd


def test_the_release_saved_from_is_fetched_from_npm_as_the_baseline(
    tmp_path: Path, registry: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    root, base = registry
    publish(root, base, {"1.0.0": npm_tarball({PLANNER: PLANNER_V1})})
    gsd = no_baseline_but_npm(tmp_path)
    argv = ["--patches", str(gsd.patches), "--pristine", str(gsd.pristine)]
    code, doc = reapply_json(capsys, *argv)
    assert code == 1 and doc["drifted_files"] == [PLANNER]
    remedy = doc["remedies"][0]
    source = remedy.rsplit("--baseline-source ", 1)[1]
    assert source == f"npm:{PACKAGE}@1.0.0"
    code, doc = reapply_json(capsys, *argv, "--baseline-source", source)
    assert code == 0, doc
    [result] = doc["results"]
    assert (result["status"], result["baseline"]) == ("merged", "release")
    assert gsd.read(PLANNER) == PLANNER_MERGED


def test_a_tarball_that_does_not_match_its_integrity_is_refused(
    tmp_path: Path, registry: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    root, base = registry
    publish(root, base, {"1.0.0": npm_tarball({PLANNER: PLANNER_V1})}, tamper=True)
    gsd = no_baseline_but_npm(tmp_path)
    argv = ["reapply", "--patches", str(gsd.patches), "--pristine", str(gsd.pristine)]
    assert cli_main.main([*argv, "--baseline-source", f"npm:{PACKAGE}@1.0.0"]) == 1
    err = capsys.readouterr().err
    assert "integrity" in err and len(err.strip().splitlines()) == 1
    assert gsd.read(PLANNER) == PLANNER_V2


def test_a_version_the_registry_does_not_have_is_named(
    tmp_path: Path, registry: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    root, base = registry
    publish(root, base, {"1.1.0": npm_tarball({PLANNER: PLANNER_V1})})
    gsd = no_baseline_but_npm(tmp_path)
    argv = ["reapply", "--patches", str(gsd.patches), "--pristine", str(gsd.pristine)]
    assert cli_main.main([*argv, "--baseline-source", f"npm:{PACKAGE}@1.0.0"]) == 1
    err = capsys.readouterr().err
    assert "version 1.0.0 not found" in err and "1.1.0" in err


def test_an_npm_source_lists_the_registry_versions(
    tmp_path: Path, registry: tuple[Path, str]
) -> None:
    from tether.sources import open_source

    root, base = registry
    publish(root, base, {v: npm_tarball({"a.md": v}) for v in ("1.0.0", "1.2.0", "1.10.0")})
    source = open_source(f"npm:{PACKAGE}", tmp_path / "cache")
    assert source.available_versions() == ["1.0.0", "1.2.0", "1.10.0"]
    tree = source.fetch("1.10.0")
    assert (tree.root / "a.md").read_text() == "1.10.0"
    pinned = open_source(f"npm:{PACKAGE}@1.2.0", tmp_path / "cache")
    assert pinned.available_versions() == ["1.2.0"]


@pytest.mark.parametrize("spec", ["npm:", "npm:Bad Name", "npm:pkg@not-a-version"])
def test_a_malformed_npm_spec_is_one_line(
    tmp_path: Path, spec: str, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = no_baseline_but_npm(tmp_path)
    argv = ["reapply", "--patches", str(gsd.patches), "--pristine", str(gsd.pristine)]
    assert cli_main.main([*argv, "--baseline-source", spec, "--baseline-version", "1.0.0"]) == 1
    err = capsys.readouterr().err
    assert "expected npm:<package>" in err and len(err.strip().splitlines()) == 1


def test_baseline_version_is_still_needed_for_an_unpinned_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gsd = no_baseline_but_npm(tmp_path)
    argv = ["reapply", "--patches", str(gsd.patches), "--baseline-source", f"npm:{PACKAGE}"]
    assert cli_main.main(argv) == 2
    assert "--baseline-version" in capsys.readouterr().err


# A tiny package of our own whose Markdown names its config folder the way GSD's package
# does (``~/.claude/``, ``$HOME/.claude/``, ``~/.claude`` alone, ``./.claude/``). GSD's
# installer rewrites those to the install's path prefix before writing and records the hash
# of what it wrote, so the package's own bytes never hash to the recorded pristine hash.
TINY_AGENT = "agents/gsd-tiny.md"
TINY_FLOW = "get-shit-done/workflows/tiny.md"
TINY_AGENT_PACKAGE = """---
name: gsd-tiny
description: A tiny agent
---

Run `node ~/.claude/tools/tiny.cjs` first.
Settings: $HOME/.claude/settings.json, and the folder ~/.claude itself.

1. Read.
2. Write.
3. Check.
"""
TINY_FLOW_PACKAGE = """# Tiny

Load ~/.claude/get-shit-done/bin/tool.cjs.
Cache: ./.claude/cache/.

1. Plan.
2. Do.
"""


def tiny_installed(prefix: str) -> dict[str, str]:
    """The two files as the installer writes them for ``prefix``, spelled out by hand."""
    agent = f"""---
name: gsd-tiny
description: A tiny agent
---

Run `node {prefix}tools/tiny.cjs` first.
Settings: {prefix}settings.json, and the folder {prefix[:-1]} itself.

1. Read.
2. Write.
3. Check.
"""
    flow = f"""# Tiny

Load {prefix}get-shit-done/bin/tool.cjs.
Cache: ./.claude/cache/.

1. Plan.
2. Do.
"""
    return {TINY_AGENT: agent, TINY_FLOW: flow}


def tiny_install(tmp_path: Path, prefix_of: Callable[[Path], str]) -> tuple[Gsd, dict[str, str]]:
    """1.0.0 installed with its paths rewritten to ``prefix_of(target)``, customised (a line
    added to the agent, the workflow's title changed), backed up, 2.0.0 installed over it
    (changing the bottom of both) with gsd-pristine/ filled from 2.0.0, as GSD 1.42 does.
    Returns the install and the merges expected."""
    target = tmp_path / "gsd" / "claude"  # where make_gsd puts the install
    v1 = tiny_installed(prefix_of(target))
    ours = {
        TINY_AGENT: v1[TINY_AGENT].replace("A tiny agent\n", "A tiny agent\nmodel: tiny\n"),
        TINY_FLOW: v1[TINY_FLOW].replace("# Tiny\n", "# Tiny, my way\n"),
    }
    v2 = {
        TINY_AGENT: v1[TINY_AGENT].replace("3. Check.\n", "3. Check twice.\n4. Commit.\n"),
        TINY_FLOW: v1[TINY_FLOW] + "3. Report.\n",
    }
    merged = {
        TINY_AGENT: ours[TINY_AGENT].replace("3. Check.\n", "3. Check twice.\n4. Commit.\n"),
        TINY_FLOW: ours[TINY_FLOW] + "3. Report.\n",
    }
    files = {rel: (v1[rel], ours[rel], v2[rel]) for rel in v1}
    gsd = make_gsd(tmp_path / "gsd", files, pristine=False)
    assert gsd.target == target
    write(gsd.pristine, v2)
    return gsd, merged


def publish_tiny(registry: tuple[Path, str]) -> str:
    root, base = registry
    package = {TINY_AGENT: TINY_AGENT_PACKAGE, TINY_FLOW: TINY_FLOW_PACKAGE}
    publish(root, base, {"1.0.0": npm_tarball(package)})
    return f"npm:{PACKAGE}@1.0.0"


def test_a_global_install_the_installer_rewrote_gets_the_release_as_it_was_written(
    tmp_path: Path,
    registry: tuple[Path, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A global install inside the home folder: the installer writes ``$HOME/<folder>/``.
    monkeypatch.setenv("HOME", str(tmp_path / "gsd"))
    gsd, merged = tiny_install(tmp_path, lambda target: "$HOME/claude/")
    source = publish_tiny(registry)
    argv = ["--patches", str(gsd.patches), "--pristine", str(gsd.pristine)]
    code, doc = reapply_json(capsys, *argv, "--baseline-source", source)
    assert code == 0, doc["results"]
    for result in doc["results"]:
        assert (result["status"], result["baseline"]) == ("merged", "release"), result
        assert "rewritten to $HOME/claude/" in result["reason"]
    assert {rel: gsd.read(rel) for rel in merged} == merged


def test_a_local_install_the_installer_rewrote_gets_its_absolute_path(
    tmp_path: Path,
    registry: tuple[Path, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Outside the home folder (a local install): the installer writes the absolute path.
    monkeypatch.setenv("HOME", str(tmp_path / "elsewhere"))
    gsd, merged = tiny_install(tmp_path, lambda target: f"{target}/")
    source = publish_tiny(registry)
    argv = ["--patches", str(gsd.patches), "--pristine", str(gsd.pristine)]
    code, doc = reapply_json(capsys, *argv, "--baseline-source", source)
    assert code == 0, doc
    assert [r["baseline"] for r in doc["results"]] == ["release", "release"]
    assert {rel: gsd.read(rel) for rel in merged} == merged


def test_a_rewriting_that_does_not_hash_exactly_is_never_a_baseline(
    tmp_path: Path,
    registry: tuple[Path, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Installed for another folder than this one (``$HOME/other/``): no prefix tether may
    # derive for this install reproduces the recorded hash, so the file has no baseline,
    # fails as drifted, and nothing of the install is written.
    monkeypatch.setenv("HOME", str(tmp_path / "gsd"))
    gsd, _ = tiny_install(tmp_path, lambda target: "$HOME/other/")
    source = publish_tiny(registry)
    before = snapshot(gsd.target)
    argv = ["--patches", str(gsd.patches), "--pristine", str(gsd.pristine)]
    code, doc = reapply_json(capsys, *argv, "--baseline-source", source)
    assert code == 1, doc
    assert sorted(doc["drifted_files"]) == sorted([TINY_AGENT, TINY_FLOW])
    for result in doc["results"]:
        assert (result["status"], result["baseline"]) == ("failed", "none"), result
        assert "nor with the installer's path rewriting" in result["reason"]
    assert snapshot(gsd.target) == before


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of the install but tether's own records (lock, journal, release cache)."""
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and ".tether" not in path.relative_to(folder).parts
    }
