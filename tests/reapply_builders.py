"""Fixtures for the reapply tests: a GSD-style install, customised, backed up and upgraded.

Everything is written the way GSD's installer leaves it: ``gsd-file-manifest.json``
``{version, timestamp, mode, files: {path: sha256}}`` in the install folder and
``gsd-local-patches/<path>`` with ``backup-meta.json``
``{backed_up_at, from_version, from_manifest_timestamp, files[], pristine_hashes}``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builders import git, run_forked
from tether.cli import reapply_cmd

MANIFEST = "gsd-file-manifest.json"
PATCHES = "gsd-local-patches"

PLANNER = "agents/gsd-planner.md"
EXECUTE = "get-shit-done/workflows/execute.md"
HELP = "commands/gsd/help.md"

PLANNER_V1 = """---
name: gsd-planner
description: Creates executable phase plans
tools: Read, Write, Bash
color: green
---

<role>
You are a GSD planner.
</role>

<process>
1. Read the roadmap.
2. Write the plan.
3. Check the plan.
</process>
"""
# The user adds an 11-character line and deletes another, both near the top.
PLANNER_OURS = PLANNER_V1.replace(
    "description: Creates executable phase plans\n",
    "description: Creates executable phase plans\nmodel: opus\n",
).replace("color: green\n", "")
# Upstream changes the bottom only.
PLANNER_V2 = PLANNER_V1.replace("2. Write the plan.\n", "2. Write the plan with tasks.\n").replace(
    "</process>\n", "4. Commit.\n</process>\n"
)
PLANNER_MERGED = PLANNER_OURS.replace(
    "2. Write the plan.\n", "2. Write the plan with tasks.\n"
).replace("</process>\n", "4. Commit.\n</process>\n")

EXECUTE_V1 = "# Execute\n\n1. Load the plan.\n2. Run tests.\n3. Report.\n"
EXECUTE_OURS = EXECUTE_V1.replace("Run tests.", "Run tests with coverage.")
EXECUTE_V2 = EXECUTE_V1.replace("Run tests.", "Run the test suite.")

HELP_V1 = "# Help\n\nCommands:\n- /gsd:plan\n- /gsd:execute\n"
HELP_OURS = HELP_V1 + "- /gsd:progress\n"
# Upstream adopts the user's line (and retitles the page): the change is incorporated.
HELP_V2 = HELP_OURS.replace("# Help\n", "# Help (2.0)\n")


def sha(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())


@dataclass
class Gsd:
    """An install folder that went 1.0.0 → customised → backed up → 2.0.0."""

    root: Path
    v1: dict[str, str]
    ours: dict[str, str]
    v2: dict[str, str]
    hashes: dict[str, str] = field(default_factory=dict)

    @property
    def target(self) -> Path:
        return self.root / "claude"

    @property
    def patches(self) -> Path:
        return self.target / PATCHES

    @property
    def pristine(self) -> Path:
        return self.root / "gsd-pristine"

    @property
    def backups(self) -> Path:
        return self.target / "tether-reapply-backup"

    def read(self, rel: str) -> str:
        return (self.target / rel).read_text()

    def meta(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.patches / "backup-meta.json").read_text())
        return data

    @property
    def meta_files(self) -> list[str]:
        """The files backup-meta.json lists."""
        return list(self.meta()["files"])

    def set_meta(self, **changes: Any) -> None:
        meta = {**self.meta(), **changes}
        (self.patches / "backup-meta.json").write_text(json.dumps(meta, indent=2))


def install_manifest(target: Path, version: str, files: dict[str, str]) -> None:
    manifest = {
        "version": version,
        "timestamp": f"2025-01-0{version[0]}T00:00:00.000Z",
        "mode": "full",
        "files": {rel: sha(text) for rel, text in files.items()},
    }
    (target / MANIFEST).write_text(json.dumps(manifest, indent=2))


def installer_backup(target: Path) -> None:
    """What GSD's installer does before wiping: save every file that differs from its
    manifest into gsd-local-patches/ with backup-meta.json."""
    manifest = json.loads((target / MANIFEST).read_text())
    changed = [
        rel
        for rel, digest in sorted(manifest["files"].items())
        if (target / rel).is_file() and sha((target / rel).read_bytes()) != digest
    ]
    patches = target / PATCHES
    for rel in changed:
        (patches / rel).parent.mkdir(parents=True, exist_ok=True)
        (patches / rel).write_bytes((target / rel).read_bytes())
    meta = {
        "backed_up_at": "2025-02-01T10:00:00.000Z",
        "from_version": manifest["version"],
        "from_manifest_timestamp": manifest["timestamp"],
        "files": changed,
        "pristine_hashes": {rel: manifest["files"][rel] for rel in changed},
    }
    patches.mkdir(parents=True, exist_ok=True)
    (patches / "backup-meta.json").write_text(json.dumps(meta, indent=2))


def make_gsd(
    tmp: Path,
    files: dict[str, tuple[str, str, str]],
    *,
    pristine: bool = True,
    git_history: bool = False,
) -> Gsd:
    """files: path -> (1.0.0, the user's copy, 2.0.0)."""
    gsd = Gsd(
        tmp,
        {rel: v[0] for rel, v in files.items()},
        {rel: v[1] for rel, v in files.items()},
        {rel: v[2] for rel, v in files.items()},
    )
    gsd.target.mkdir(parents=True, exist_ok=True)
    write(gsd.target, gsd.v1)
    install_manifest(gsd.target, "1.0.0", gsd.v1)
    if git_history:
        git(gsd.target, "init", "-q", "-b", "main")
        git(gsd.target, "add", "-A")
        git(gsd.target, "commit", "-q", "-m", "install 1.0.0")
    write(gsd.target, gsd.ours)
    if git_history:
        git(gsd.target, "commit", "-q", "-am", "my changes")
    installer_backup(gsd.target)
    if pristine:
        write(gsd.pristine, gsd.v1)
    write(gsd.target, gsd.v2)
    install_manifest(gsd.target, "2.0.0", gsd.v2)
    return gsd


def standard(tmp: Path, **options: Any) -> Gsd:
    return make_gsd(
        tmp,
        {
            PLANNER: (PLANNER_V1, PLANNER_OURS, PLANNER_V2),
            EXECUTE: (EXECUTE_V1, EXECUTE_OURS, EXECUTE_V2),
            HELP: (HELP_V1, HELP_OURS, HELP_V2),
        },
        **options,
    )


def both_sides(ours: str, installed: str) -> str:
    """A no-baseline conflict as reapply writes it into the file."""
    from tether.flows.reapply import both_versions

    return both_versions(ours.encode(), installed.encode()).decode()


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tether reapply")
    reapply_cmd.add_arguments(parser)
    return parser.parse_args(list(argv))


def cli(*argv: str) -> int:
    """The command in-process, through its own parser."""
    return reapply_cmd.run(parse(*argv))


def reapply_json(capsys: Any, *argv: str) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = cli(*argv, "--json")
    document: dict[str, Any] = json.loads(capsys.readouterr().out)
    return code, document


def statuses(document: dict[str, Any]) -> dict[str, str]:
    return {r["file"]: r["status"] for r in document["results"]}


# A real process, so a crash point can end it.


def reapply_forked(*argv: str, crash: str | None = None) -> subprocess.CompletedProcess[str]:
    """``tether reapply`` in a child forked from the test's process (``builders.run_forked``),
    which the crash point ``crash`` kills for real."""
    return run_forked("reapply", *argv, crash=crash, timeout=60)
