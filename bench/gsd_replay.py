"""Replay: real GSD releases, a customised install, the installer's own patch folder, and
``tether reapply`` on it.

Run ``python bench/gsd_replay.py`` (``--from 1.37.1 --to 1.42.3``, ``--files N``,
``--workdir DIR --keep``). Needs ``npx`` and the npm registry (the one npm itself uses). In
a scratch HOME it installs GSD ``--from`` for Claude Code globally with the real installer
(``npx get-shit-done-cc@<from> --claude --global``), adds two lines of its own to each of
``--files`` files (half agents, half workflows: one after line 12, one at the end), installs
``--to`` over it with the real installer (which saves the changed files in
``gsd-local-patches/`` with ``backup-meta.json``, and fills ``gsd-pristine/``), then runs
``tether reapply --json`` twice on a copy each: as it comes (GSD 1.42 and later fill
``gsd-pristine/`` from the new release, so the pristine copies have drifted), and with the
remedy it names first (``--baseline-source npm:get-shit-done-cc@<from>``). For each it
counts the files by status and the files whose every added line is in the installed file
(merged, or in a conflict's markers), and checks that no added line is lost anywhere: in the
installed file or in the saved copy tether keeps. Not a speed target: the figures are counts
(and the wall time, for scale). docs/reapply.md, "A replay of real GSD releases", keeps the
latest figures.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PACKAGE = "get-shit-done-cc"


def install(home: Path, version: str) -> None:
    """The real installer, non-interactive (stdin closed), into ``home/.claude``."""
    env = {**os.environ, "HOME": str(home), "npm_config_update_notifier": "false"}
    done = subprocess.run(
        ["npx", "-y", f"{PACKAGE}@{version}", "--claude", "--global"],
        cwd=home,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise SystemExit(f"installing {PACKAGE}@{version} failed:\n{done.stderr[-2000:]}")


def customise(config: Path, count: int) -> dict[str, list[str]]:
    """Two lines of the user's own in each of ``count`` files; path -> the lines."""
    agents = sorted((config / "agents").glob("*.md"))
    workflows = sorted((config / "get-shit-done" / "workflows").glob("*.md"))
    chosen = agents[: (count + 1) // 2] + workflows[: count // 2]
    added: dict[str, list[str]] = {}
    for number, path in enumerate(chosen):
        middle = f"<!-- my customisation {number}: a step of my own -->"
        end = f"<!-- my customisation {number}: a closing note of my own -->"
        lines = path.read_text().splitlines(keepends=True)
        lines.insert(min(12, len(lines)), middle + "\n")
        path.write_text("".join(lines) + "\n" + end + "\n")
        added[path.relative_to(config).as_posix()] = [middle, end]
    return added


def reapply(home: Path, extra: list[str]) -> tuple[int, dict[str, Any], float]:
    env = {**os.environ, "HOME": str(home)}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "tether", "reapply", "--json", *extra],
        cwd=home,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
    )
    took = time.monotonic() - started
    if not done.stdout.strip():
        raise SystemExit(f"tether reapply printed nothing (exit {done.returncode}):\n{done.stderr}")
    return done.returncode, json.loads(done.stdout), took


def tally(config: Path, added: dict[str, list[str]], doc: dict[str, Any]) -> dict[str, object]:
    """What one reapply left: statuses, files whose every added line is installed, and the
    added lines found nowhere (neither installed nor in the saved copy tether keeps)."""
    statuses = collections.Counter(result["status"] for result in doc["results"])
    patches = config / "gsd-local-patches"
    installed_whole = 0
    lost: list[str] = []
    for rel, lines in added.items():
        here = (config / rel).read_text() if (config / rel).is_file() else ""
        saved = (patches / rel).read_text() if (patches / rel).is_file() else ""
        installed_whole += all(line in here for line in lines)
        lost += [f"{rel}: {line}" for line in lines if line not in here and line not in saved]
    not_merged = {
        result["file"]: (result.get("reason") or "")[:160]
        for result in doc["results"]
        if result["status"] not in ("merged", "incorporated")
    }
    return {
        "statuses": dict(statuses),
        "files_with_every_line_installed": installed_whole,
        "lines_lost": lost,
        "not_merged": not_merged,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="old", default="1.37.1")
    parser.add_argument("--to", dest="new", default="1.42.3")
    parser.add_argument("--files", type=int, default=16)
    parser.add_argument("--workdir")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args(argv)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="tether-gsd-replay-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        home = work / "installed"
        home.mkdir()
        install(home, args.old)
        added = customise(home / ".claude", args.files)
        install(home, args.new)
        meta = json.loads((home / ".claude/gsd-local-patches/backup-meta.json").read_text())
        report: dict[str, object] = {
            "from": args.old,
            "to": args.new,
            "customised_files": len(added),
            "saved_by_the_installer": len(meta["files"]),
            "pristine_folder": (home / ".claude/gsd-pristine").is_dir(),
        }
        runs = {
            "as found": [],
            "npm baseline": ["--baseline-source", f"npm:{PACKAGE}@{args.old}"],
        }
        for name, extra in runs.items():
            copy = work / name.replace(" ", "-")
            shutil.copytree(home, copy, symlinks=True)
            code, doc, took = reapply(copy, extra)
            report[name] = {"exit": code, "seconds": round(took, 2)} | tally(
                copy / ".claude", added, doc
            )
        print(json.dumps(report, indent=2))
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(report, indent=2) + "\n")
        lost = any(run["lines_lost"] for run in report.values() if isinstance(run, dict))
        return 1 if lost else 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
