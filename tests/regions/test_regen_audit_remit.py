"""A realistic generated region, modelled on GAIA's audit remit.

A roster (``.gaia/audit-ci.yml``) lists auditors and the globs each one reviews; a shipped
bash program rewrites the ``audit-remit`` block of each auditor's agent file from it. An
adopter who adds a glob to the roster and runs the program diverges from the release
copy without editing the agent file by hand: that must not be drift.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tether.engine.regions import (
    compare_region_file,
    conflict_patch,
    parse_region_declarations,
    scan_markers,
)
from tether.flows.regen import run_regeneration

START = "<!-- gaia:audit-remit:start -->"
END = "<!-- gaia:audit-remit:end -->"
ROSTER = ".gaia/audit-ci.yml"
WRITER = ".gaia/scripts/write-audit-remits.sh"
BASH_AGENT = ".claude/agents/code-audit-bash.md"
PROSE_AGENT = ".claude/agents/code-audit-prose.md"

# Written for this test: reads the roster with awk (no YAML tool needed) and rewrites the
# block between the markers in every member's agent file, keeping the file's mode.
WRITER_SCRIPT = r"""#!/usr/bin/env bash
# Rewrites the audit-remit region of every roster member's agent file from the roster.
set -euo pipefail

config=".gaia/audit-ci.yml"

# "name<TAB>glob" for every glob of every auditor, in roster order.
roster_rows() {
  awk '
    /^  - name:/ { name = $3; next }
    /^      - / && name != "" {
      glob = $0
      sub(/^      - "?/, "", glob)
      sub(/"$/, "", glob)
      print name "\t" glob
    }
  ' "$config"
}

rows=$(roster_rows)
for member in $(printf '%s\n' "$rows" | cut -f1 | uniq); do
  file=".claude/agents/$member.md"
  if [ ! -f "$file" ]; then
    echo "no agent file for $member" >&2
    exit 4
  fi
  body=$(printf '%s\n' "$rows" | awk -F'\t' -v m="$member" '$1 == m { printf "- `%s`\n", $2 }')
  tmp=$(mktemp)
  BODY="$body" REMIT_START='<!-- gaia:audit-remit:start -->' \
    REMIT_END='<!-- gaia:audit-remit:end -->' awk '
    $0 == ENVIRON["REMIT_START"] {
      print
      print ENVIRON["BODY"]
      print ""
      print "Filter the changed-file list against the globs above. If none match, self-skip."
      inside = 1
      next
    }
    $0 == ENVIRON["REMIT_END"] { inside = 0 }
    !inside { print }
  ' "$file" > "$tmp"
  cat "$tmp" > "$file"
  rm -f "$tmp"
  echo "rewrote $file"
done
"""


def roster(bash_globs: list[str], prose_globs: list[str]) -> str:
    def member(name: str, globs: list[str]) -> str:
        lines = "".join(f'      - "{glob}"\n' for glob in globs)
        return f"  - name: {name}\n    globs:\n{lines}"

    return (
        "# Who audits what. Agent remit regions are generated from this list.\n"
        "auditors:\n"
        + member("code-audit-bash", bash_globs)
        + member("code-audit-prose", prose_globs)
    )


def agent(name: str, intro: str) -> str:
    # Shipped with an empty region: the release build fills it by running the writer.
    return (
        f"---\nname: {name}\n---\n\n# {name}\n\n{intro}\n\n"
        f"## Remit and self-skip\n\n{START}\n{END}\n\n"
        "At the start of every run, list the changed files.\n"
    )


MANIFEST = {
    "files": {
        ROSTER: "shared",
        WRITER: "owned",
        BASH_AGENT: "owned",
        PROSE_AGENT: "owned",
    },
    "regions": [
        {
            "id": "audit-remit",
            "startMarker": START,
            "endMarker": END,
            "paths": [BASH_AGENT, PROSE_AGENT],
            "regenerate": {"interpreter": "bash", "operand": WRITER, "args": []},
        }
    ],
}


def run_writer(root: Path) -> None:
    subprocess.run(["bash", WRITER], cwd=root, check=True, capture_output=True)


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def make_release(root: Path, roster_text: str, bash_intro: str) -> Path:
    write_tree(
        root,
        {
            ROSTER: roster_text,
            WRITER: WRITER_SCRIPT,
            BASH_AGENT: agent("code-audit-bash", bash_intro),
            PROSE_AGENT: agent("code-audit-prose", "You audit instruction prose."),
            ".gaia/manifest.json": json.dumps(MANIFEST),
        },
    )
    run_writer(root)
    return root


def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Release 1.0 (B), release 1.1 (L), and an adopter project installed from 1.0 (A).

    Upstream 1.1 rewords the bash agent's intro and adds a glob to each auditor. The
    adopter added a glob of their own to the bash auditor and ran the writer.
    """
    base = make_release(
        tmp_path / "1.0",
        roster([".gaia/**/*.sh", ".github/**/*.sh"], [".claude/skills/**/*.md"]),
        "You audit bash.",
    )
    latest = make_release(
        tmp_path / "1.1",
        roster(
            [".gaia/**/*.sh", ".github/**/*.sh", ".husky/**"],
            [".claude/skills/**/*.md", ".claude/commands/**/*.md"],
        ),
        "You audit GAIA's own bash machinery.",
    )
    adopter = make_release(
        tmp_path / "project",
        roster([".gaia/**/*.sh", ".github/**/*.sh", "tools/**/*.sh"], [".claude/skills/**/*.md"]),
        "You audit bash.",
    )
    return base, latest, adopter


def compare(base: Path, latest: Path, adopter: Path, rel: str) -> str:
    result = compare_region_file(
        (base / rel).read_bytes(),
        (latest / rel).read_bytes(),
        (adopter / rel).read_bytes(),
        START,
        END,
    )
    return result.verdict


def test_the_writer_fills_the_region(tmp_path: Path) -> None:
    _, _, adopter = setup(tmp_path)
    text = (adopter / BASH_AGENT).read_text()
    assert scan_markers(text, START, END).kind == "region"
    assert "- `tools/**/*.sh`\n" in text


def test_adopter_regeneration_is_not_drift(tmp_path: Path) -> None:
    base, latest, adopter = setup(tmp_path)
    # Byte for byte the adopter's agent file differs from the release it installed...
    assert (adopter / BASH_AGENT).read_bytes() != (base / BASH_AGENT).read_bytes()
    # ...but outside the region it does not: take the new release's text.
    assert compare(base, latest, adopter, BASH_AGENT) == "no-adopter-drift"
    # Upstream changed only the prose agent's region: nothing to do for it.
    assert (latest / PROSE_AGENT).read_bytes() != (base / PROSE_AGENT).read_bytes()
    assert compare(base, latest, adopter, PROSE_AGENT) == "no-upstream-change"


def test_update_then_regenerate_keeps_the_adopters_roster(tmp_path: Path) -> None:
    base, latest, adopter = setup(tmp_path)
    manifest = json.loads((latest / ".gaia/manifest.json").read_text())
    decls, problems = parse_region_declarations(manifest["regions"])
    assert problems == []
    # What the update does before regenerating: owned files take the release copy, and
    # the roster (the region's input) is merged: upstream's globs plus the adopter's.
    for rel in (WRITER, BASH_AGENT):
        (adopter / rel).write_bytes((latest / rel).read_bytes())
    merged = roster(
        [".gaia/**/*.sh", ".github/**/*.sh", ".husky/**", "tools/**/*.sh"],
        [".claude/skills/**/*.md", ".claude/commands/**/*.md"],
    )
    (adopter / ROSTER).write_text(merged)

    outcome = run_regeneration(
        adopter,
        decls[0],
        set(manifest["files"]),
        timeout=30,
        log_path=adopter / ".tether" / "regen.log",
        backup_dir=adopter / ".tether" / "backup" / "run-1",
    )

    assert outcome.status == "regenerated", outcome
    assert outcome.rewritten_paths == (BASH_AGENT, PROSE_AGENT)
    assert outcome.reverted_paths == () and outcome.new_outside_paths == ()
    bash_agent = (adopter / BASH_AGENT).read_text()
    assert "You audit GAIA's own bash machinery." in bash_agent
    assert "- `.husky/**`\n" in bash_agent and "- `tools/**/*.sh`\n" in bash_agent
    assert "- `.claude/commands/**/*.md`\n" in (adopter / PROSE_AGENT).read_text()
    assert (
        "rewrote .claude/agents/code-audit-bash.md" in (adopter / ".tether/regen.log").read_text()
    )
    # The regenerated file now differs from the release copy only inside the region.
    assert compare(base, latest, adopter, BASH_AGENT) == "already-latest"


def test_hand_edit_outside_the_region_conflicts_without_region_bodies(tmp_path: Path) -> None:
    base, latest, adopter = setup(tmp_path)
    path = adopter / BASH_AGENT
    path.write_text(path.read_text().replace("You audit bash.", "You audit our bash."))
    result = compare_region_file(
        (base / BASH_AGENT).read_bytes(),
        (latest / BASH_AGENT).read_bytes(),
        path.read_bytes(),
        START,
        END,
    )
    assert result.verdict == "conflict"
    patch = conflict_patch(result, BASH_AGENT)
    assert "-You audit our bash.\n" in patch
    assert "+You audit GAIA's own bash machinery.\n" in patch
    assert "- `" not in patch and "Filter the changed-file list" not in patch


def test_a_writer_that_strays_is_confined(tmp_path: Path) -> None:
    _, latest, adopter = setup(tmp_path)
    manifest = json.loads((latest / ".gaia/manifest.json").read_text())
    decl = parse_region_declarations(manifest["regions"])[0][0]
    # A buggy writer that also "normalises" the roster it reads.
    writer = adopter / WRITER
    writer.write_text(WRITER_SCRIPT + "\necho 'auditors: []' > .gaia/audit-ci.yml\n")
    roster_before = (adopter / ROSTER).read_bytes()
    outcome = run_regeneration(adopter, decl, set(manifest["files"]), timeout=30)
    assert outcome.status == "regenerated"
    assert outcome.reverted_paths == (ROSTER,)
    assert (adopter / ROSTER).read_bytes() == roster_before
