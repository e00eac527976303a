"""gbrain-style integrations: files copied from a recipe folder into a host repository,
installed with ``tether init --profile gbrain`` and kept fresh with ``tether refresh``."""

import json
import os
import re
import stat

import pytest

from builders import pty_session, run_forked, run_tether, tree_digest, write_files

BODY = "".join(f"rule {i}: keep it simple\n" for i in range(10))
ROOT = "tools/gbrain"  # the recipe's target_root_relative_to_host_repo
RECORD = f"{ROOT}/.gbrain-source.json"  # gbrain's record of the install, in the target root


def recipe(root, files, skills=(), version="0.4.0"):
    """A recipe as gbrain ships one: every ``target`` is relative to the host repository's
    root (and lies under the target root)."""
    manifest = {
        "recipe": "brain-sync",
        "gbrain_version": version,
        "target_root_relative_to_host_repo": ROOT,
        "files": [
            {"src": f"src/{t}", "target": f"{ROOT}/{t}", "mode": m} for t, (_, m) in files.items()
        ],
        "skills": [
            {"src": f"skills/{t}", "target": f"{ROOT}/skills/{t}", "mode": "0644"} for t in skills
        ],
    }
    write_files(root, {f"src/{t}": text for t, (text, _) in files.items()})
    write_files(root, {f"skills/{t}": f"skill {t}\n" for t in skills})
    write_files(root, {"install/manifest.json": json.dumps(manifest, indent=2)})
    return root


def refresh(host, *args):
    result = run_tether("refresh", "--yes", "--json", "-C", str(host), *args)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout)


@pytest.fixture
def installed(tmp_path):
    rec = recipe(
        tmp_path / "recipe",
        {
            "sync.sh": ("#!/bin/sh\necho sync\n", "0755"),
            "rules.md": (BODY, "0644"),
            "same.md": ("same\n", "0644"),
            "gone-clean.md": ("old\n", "0644"),
            "gone-edited.md": ("old\n", "0644"),
            "deleted-here.md": ("d\n", "0644"),
        },
        skills=["triage.md"],
    )
    host = tmp_path / "host"
    host.mkdir()
    result = run_tether("init", "--profile", "gbrain", "--source", str(rec), "-C", str(host))
    assert result.returncode == 0, result.stderr
    return rec, host


def test_init_copies_entries_with_modes_and_writes_the_gbrain_record(installed):
    _rec, host = installed
    base = host / "tools/gbrain"
    assert (base / "rules.md").read_text() == BODY
    assert stat.S_IMODE(os.stat(base / "sync.sh").st_mode) == 0o755
    assert (base / "skills/triage.md").read_text() == "skill triage.md\n"
    record = json.loads((host / RECORD).read_text())
    assert not (host / ".gbrain-source.json").exists()
    assert record["recipe"] == "brain-sync" and record["gbrain_version"] == "0.4.0"
    assert {"recipe", "gbrain_version", "install_kind", "copied_at", "files"} <= set(record)
    entry = next(f for f in record["files"] if f["target"] == f"{ROOT}/sync.sh")
    assert entry["src"] == "src/sync.sh" and entry["mode"] == "0755" and len(entry["sha256"]) == 64
    status = json.loads(run_tether("status", "--json", "-C", str(host)).stdout)
    assert status["profile"] == "gbrain" and status["clean"] == 7


def test_refresh_classifies_every_state(installed):
    rec, host = installed
    base = host / "tools/gbrain"
    # recipe side
    (rec / "src/sync.sh").write_text("#!/bin/sh\necho sync v2\n")  # stale (host untouched)
    (rec / "src/rules.md").write_text(BODY.replace("rule 8:", "rule 8 (v2):"))
    manifest = json.loads((rec / "install/manifest.json").read_text())
    manifest["files"] = [f for f in manifest["files"] if "/gone-" not in f["target"]]
    manifest["files"] += [
        {"src": "src/new.md", "target": f"{ROOT}/new.md"},
        {"src": "src/clash.md", "target": f"{ROOT}/clash.md"},
    ]
    write_files(
        rec,
        {
            "src/new.md": "new\n",
            "src/clash.md": "recipe clash\n",
            "install/manifest.json": json.dumps(manifest),
        },
    )
    # host side
    (base / "rules.md").write_text(BODY.replace("rule 1:", "rule 1 (ours):"))
    (base / "gone-edited.md").write_text("edited here\n")
    (base / "deleted-here.md").unlink()
    (base / "clash.md").write_text("host file of our own\n")
    code, doc = refresh(host, "--dry-run")
    t = "tools/gbrain/"
    assert doc["files"] == {
        t + "clash.md": "new-in-source",
        t + "deleted-here.md": "host-deleted",
        t + "new.md": "new-in-source",
        t + "rules.md": "locally-modified",
        t + "same.md": "unchanged-identical",
        t + "skills/triage.md": "unchanged-identical",
        t + "sync.sh": "unchanged-stale",
        t + "gone-clean.md": "source-deleted",
        t + "gone-edited.md": "source-deleted",
    }
    code, doc = refresh(host, "--delete-removed")
    assert code == 4  # the clash is left for a person
    assert (base / "clash.md").read_text() == "host file of our own\n"  # never overwritten
    assert "rule 1 (ours):" in (base / "rules.md").read_text()
    assert "rule 8 (v2):" in (base / "rules.md").read_text()  # a real merge, not keep/take
    assert (base / "sync.sh").read_text() == "#!/bin/sh\necho sync v2\n"
    assert (base / "new.md").read_text() == "new\n"
    assert not (base / "gone-clean.md").exists()
    assert (base / "gone-edited.md").read_text() == "edited here\n"  # modified: only listed
    assert not (base / "deleted-here.md").exists()
    record = json.loads((host / RECORD).read_text())
    assert {f["target"] for f in record["files"]} >= {f"{ROOT}/new.md", f"{ROOT}/clash.md"}


def test_keep_mine_holds_across_two_refreshes(installed):
    rec, host = installed
    target = host / "tools/gbrain/rules.md"
    target.write_text(BODY.replace("rule 3:", "rule 3 MINE:"))
    (rec / "src/rules.md").write_text(BODY.replace("rule 3:", "rule 3 v2:"))
    code, doc = refresh(host, "--auto", "keep-mine")
    assert code == 0 and "rule 3 MINE:" in target.read_text()
    (rec / "src/rules.md").write_text(BODY.replace("rule 3:", "rule 3 v3:"))
    code, doc = refresh(host, "--auto", "keep-mine")
    assert code == 0 and "rule 3 MINE:" in target.read_text()
    assert doc["files"]["tools/gbrain/rules.md"] == "locally-modified"


def test_crlf_host_copy_is_not_modified_after_a_noop_refresh(installed):
    rec, host = installed
    target = host / "tools/gbrain/rules.md"
    target.write_bytes(BODY.replace("\n", "\r\n").encode())  # a CRLF checkout
    code, doc = refresh(host)
    assert code == 0
    assert doc["status"] == "up-to-date"
    status = json.loads(run_tether("status", "--json", "-C", str(host)).stdout)
    assert status["modified"] == []
    (rec / "src/rules.md").write_text(BODY.replace("rule 5:", "rule 5 v2:"))
    code, doc = refresh(host)
    assert code == 0 and doc["files"]["tools/gbrain/rules.md"] == "unchanged-stale"
    data = target.read_bytes()
    assert b"rule 5 v2:" in data and data.count(b"\r\n") == data.count(b"\n")  # CRLF kept


def test_refresh_needs_no_source_and_refuses_without_yes_off_a_terminal(installed):
    _rec, host = installed
    result = run_tether("refresh", "-C", str(host), input="")
    assert result.returncode == 1 and "--yes" in result.stderr
    code, doc = refresh(host)
    assert code == 0 and doc["status"] == "up-to-date"


def test_interrupted_refresh_is_reported_and_can_be_abandoned(installed):
    """A real crash point stops the refresh after its first write; status names the
    unfinished refresh with the command that finishes or rolls it back."""

    from tether.state import crashpoint

    rec, host = installed
    (rec / "src/rules.md").write_text(BODY.replace("rule 8:", "rule 8 (v2):"))
    before = (host / "tools/gbrain/rules.md").read_bytes()
    crashed = run_forked("refresh", "--yes", "-C", str(host), crash="file-written:1")
    assert crashed.returncode == crashpoint.EXIT_CODE
    check = run_tether("check", "-C", str(host))
    assert check.returncode == 3
    assert "unfinished refresh 0.4.0 → " in check.stdout
    assert "rerun 'tether refresh' to finish or 'tether refresh --abandon'" in check.stdout
    abandoned = run_tether("refresh", "--abandon", "-C", str(host))
    assert abandoned.returncode == 0, abandoned.stderr
    assert abandoned.stdout.startswith("tether refresh: abandoned")
    assert (host / "tools/gbrain/rules.md").read_bytes() == before
    assert run_tether("check", "-C", str(host)).returncode == 0


# --- the plan, the questions and the decisions (docs/refresh.md) ---------------------------


def _edit_both_sides(rec, host):
    """rules.md edited on both sides (apart), sync.sh moved in the recipe only."""
    (rec / "src/rules.md").write_text(BODY.replace("rule 8:", "rule 8 (v2):"))
    (rec / "src/sync.sh").write_text("#!/bin/sh\necho sync v2\n")
    (host / "tools/gbrain/rules.md").write_text(BODY.replace("rule 1:", "rule 1 (ours):"))


def test_the_plan_with_every_state_is_shown_before_the_question(installed):
    rec, host = installed
    _edit_both_sides(rec, host)
    (host / "tools/gbrain/deleted-here.md").unlink()
    code, out = pty_session(["refresh", "-C", str(host)], [("Refresh these files? [y/N]", "n")])
    assert code == 0, out
    question = out.index("Refresh these files?")
    for state, path in [
        ("locally-modified", "tools/gbrain/rules.md"),
        ("unchanged-stale", "tools/gbrain/sync.sh"),
        ("unchanged-identical", "tools/gbrain/same.md"),
        ("host-deleted", "tools/gbrain/deleted-here.md"),
    ]:
        row = re.search(rf"{state} +{re.escape(path)}", out)
        assert row is not None and row.start() < question, out
    assert "echo sync\n" in (host / "tools/gbrain/sync.sh").read_text()  # answered no


def test_json_on_a_terminal_asks_as_update_does(installed):
    """Consent is update's rule with or without --json: on a terminal the question is asked
    (on stderr); "n" writes nothing and the run ends as cancelled."""
    rec, host = installed
    _edit_both_sides(rec, host)
    code, out = pty_session(["refresh", "--json", "-C", str(host)], [("[y/N]", "n")])
    assert code == 0, out
    assert "Refresh these files? <[y/N]>" in out and '"status": "cancelled"' in out
    assert "echo sync\n" in (host / "tools/gbrain/sync.sh").read_text()


def test_auto_take_theirs_replaces_every_locally_modified_file(installed):
    rec, host = installed
    _edit_both_sides(rec, host)  # rules.md: a clean line merge would keep our line
    (host / "tools/gbrain/same.md").write_text("same, edited here\n")  # recipe did not move
    code, doc = refresh(host, "--auto", "take-theirs")
    assert code == 0, doc
    assert (host / "tools/gbrain/rules.md").read_text() == (rec / "src/rules.md").read_text()
    assert (host / "tools/gbrain/same.md").read_text() == "same\n"
    assert doc["files"]["tools/gbrain/same.md"] == "locally-modified"


def test_auto_keep_mine_leaves_every_locally_modified_file_alone(installed):
    rec, host = installed
    _edit_both_sides(rec, host)
    mine = (host / "tools/gbrain/rules.md").read_text()
    code, doc = refresh(host, "--auto", "keep-mine")
    assert code == 0, doc
    assert (host / "tools/gbrain/rules.md").read_text() == mine  # no merge of rule 8
    assert (host / "tools/gbrain/sync.sh").read_text() == "#!/bin/sh\necho sync v2\n"


def test_auto_merge_is_the_line_merge(installed):
    rec, host = installed
    _edit_both_sides(rec, host)
    code, doc = refresh(host, "--auto", "merge")
    assert code == 0, doc
    text = (host / "tools/gbrain/rules.md").read_text()
    assert "rule 1 (ours):" in text and "rule 8 (v2):" in text


def test_per_file_decisions_on_a_terminal(installed):
    """merge shows the diff and writes nothing to that file; take-theirs writes the recipe's."""
    rec, host = installed
    _edit_both_sides(rec, host)
    mine = (host / "tools/gbrain/rules.md").read_text()
    (host / "tools/gbrain/same.md").write_text("same, edited here\n")
    code, out = pty_session(
        ["refresh", "-C", str(host)],
        [
            ("Refresh these files? [y/N]", "y"),
            ("tools/gbrain/rules.md: locally modified", "m"),
            ("tools/gbrain/same.md: locally modified", "r"),  # replace it with the recipe's
        ],
    )
    assert code == 4, out  # the hand-merge is left for a person
    assert "+rule 8 (v2):" in out and "-rule 1 (ours):" in out  # the diff was shown
    assert (host / "tools/gbrain/rules.md").read_text() == mine
    assert (host / "tools/gbrain/same.md").read_text() == "same\n"


def test_every_refresh_classifies_every_file_when_the_recipe_did_not_move(installed):
    _rec, host = installed
    (host / "tools/gbrain/rules.md").write_text(BODY + "a line of our own\n")
    (host / "tools/gbrain/deleted-here.md").unlink()
    code, doc = refresh(host)
    assert code == 0 and doc["status"] == "up-to-date"
    assert len(doc["files"]) == 7
    assert doc["files"]["tools/gbrain/rules.md"] == "locally-modified"
    assert doc["files"]["tools/gbrain/deleted-here.md"] == "host-deleted"
    assert doc["files"]["tools/gbrain/same.md"] == "unchanged-identical"
    human = run_tether("refresh", "--yes", "-C", str(host))
    assert "1 locally-modified" in human.stdout, human.stdout


def test_host_deleted_restore_copies_the_file_back(installed):
    _rec, host = installed
    (host / "tools/gbrain/deleted-here.md").unlink()
    code, doc = refresh(host, "--deleted", "restore")
    assert code == 0, doc
    assert (host / "tools/gbrain/deleted-here.md").read_text() == "d\n"
    assert doc["files"]["tools/gbrain/deleted-here.md"] == "host-deleted"


def test_host_deleted_drop_is_recorded_and_not_asked_again(installed):
    rec, host = installed
    (host / "tools/gbrain/deleted-here.md").unlink()
    code, doc = refresh(host, "--deleted", "drop")
    assert code == 0, doc
    record = json.loads((host / RECORD).read_text())
    assert f"{ROOT}/deleted-here.md" not in {f["target"] for f in record["files"]}
    (rec / "src/sync.sh").write_text("#!/bin/sh\necho sync v2\n")  # a later refresh
    code, out = pty_session(
        ["refresh", "-C", str(host)],
        [("Refresh these files? [y/N]", "y"), ("deleted here", "r")],
    )
    assert code == 0, out
    assert "deleted here" not in out  # not asked again
    assert not (host / "tools/gbrain/deleted-here.md").exists()
    assert (host / "tools/gbrain/sync.sh").read_text() == "#!/bin/sh\necho sync v2\n"


def test_a_manifest_of_an_unknown_schema_version_is_refused(installed):
    rec, host = installed
    manifest = json.loads((rec / "install/manifest.json").read_text())
    manifest["schema_version"] = "0.2.0"
    (rec / "src/sync.sh").write_text("#!/bin/sh\necho sync v2\n")
    write_files(rec, {"install/manifest.json": json.dumps(manifest)})
    result = run_tether("refresh", "--yes", "-C", str(host))
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "manifest.json" in lines[0] and "schema_version '0.2.0'" in lines[0]
    assert "re-install the recipe" in lines[0]
    assert (host / "tools/gbrain/sync.sh").read_text() == "#!/bin/sh\necho sync\n"
    from tether.state.lock import ProjectLock

    for lock in (host / ROOT / ".gbrain-source.refresh.lock", host / ".tether/gbrain/lock"):
        with ProjectLock(lock, command="gbrain refresh") as held:  # no lock left behind
            assert held.held


# --- gbrain's own run log and lock (docs/refresh.md, "Run log and lock") ---------------------


def log_of(host):
    path = host / ROOT / ".gbrain-source.refresh.log"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_refresh_logs_one_line_per_file_untouched_ones_included(installed):
    _rec, host = installed
    (host / "tools/gbrain/rules.md").write_text(BODY + "a line of our own\n")
    code, doc = refresh(host)
    assert code == 0
    lines = log_of(host)
    assert len(lines) == len(doc["files"]) == 7
    assert {line["target"]: line["state"] for line in lines} == doc["files"]
    assert all(set(line) == {"ts", "src", "target", "state", "decision"} for line in lines)
    by_path = {line["target"]: line for line in lines}
    assert by_path["tools/gbrain/same.md"]["decision"] == "none"
    # src is the recipe's path as the manifest names it, as gbrain logs it
    assert by_path["tools/gbrain/same.md"]["src"] == "src/same.md"
    assert by_path["tools/gbrain/skills/triage.md"]["src"] == "skills/triage.md"
    assert refresh(host)[0] == 0
    assert len(log_of(host)) == 14  # appended, never rewritten


def test_the_log_moves_to_dot_1_above_one_megabyte(installed):
    _rec, host = installed
    log = host / ROOT / ".gbrain-source.refresh.log"
    old = '{"ts": "old"}\n' * 80_000  # > 1 MB
    log.write_text(old)
    assert refresh(host)[0] == 0
    assert (host / ROOT / ".gbrain-source.refresh.log.1").read_text() == old
    assert len(log_of(host)) == 7


def test_a_refresh_stops_while_gbrains_own_lock_is_held_and_frees_it_after(installed):
    """gbrain's refresh takes an advisory lock on .gbrain-source.refresh.lock; a process
    holding it (here the test itself, as gbrain's tool would) stops tether's refresh at once,
    and tether holds the same lock while it runs, so gbrain's tool stops too."""
    from tether.state.lock import ProjectLock

    _rec, host = installed
    lock_path = host / ROOT / ".gbrain-source.refresh.lock"
    before = tree_digest(host)
    with ProjectLock(lock_path, command="gbrain refresh"):
        result = run_tether("refresh", "--yes", "-C", str(host))
    assert result.returncode == 1
    assert result.stderr.startswith("tether: refresh already in progress.")
    after = tree_digest(host)
    after.pop(f"{ROOT}/.gbrain-source.refresh.lock", None)
    before.pop(f"{ROOT}/.gbrain-source.refresh.lock", None)
    assert after == before
    assert refresh(host)[0] == 0
    with ProjectLock(lock_path, command="gbrain refresh") as lock:  # released after the run
        assert lock.held


# --- gbrain's path model: targets from the host's root, records in the target root ---------


def test_targets_are_relative_to_the_host_root_and_records_sit_in_the_target_root(tmp_path):
    """As gbrain's agent-voice recipe ships it: the target already names the service folder."""
    rec = tmp_path / "recipe"
    manifest = {
        "recipe": "agent-voice",
        "gbrain_version": "0.42.0",
        "target_root_relative_to_host_repo": "services/voice-agent",
        "files": [{"src": "code/server.mjs", "target": "services/voice-agent/code/server.mjs"}],
        "skills": [{"src": "skills/voice/SKILL.md", "target": "skills/voice/SKILL.md"}],
    }
    write_files(
        rec,
        {
            "code/server.mjs": "export {}\n",
            "skills/voice/SKILL.md": "# voice\n",
            "install/manifest.json": json.dumps(manifest),
        },
    )
    host = tmp_path / "host"
    host.mkdir()
    assert (
        run_tether("init", "--profile", "gbrain", "--source", str(rec), "-C", str(host)).returncode
        == 0
    )
    assert (host / "services/voice-agent/code/server.mjs").read_text() == "export {}\n"
    assert not (host / "services/voice-agent/services").exists()
    assert (host / "skills/voice/SKILL.md").read_text() == "# voice\n"
    record = json.loads((host / "services/voice-agent/.gbrain-source.json").read_text())
    assert sorted(f["target"] for f in record["files"]) == [
        "services/voice-agent/code/server.mjs",
        "skills/voice/SKILL.md",
    ]
    (rec / "code/server.mjs").write_text("export { v2 }\n")
    code, doc = refresh(host)
    assert code == 0 and doc["files"]["services/voice-agent/code/server.mjs"] == "unchanged-stale"
    log = (host / "services/voice-agent/.gbrain-source.refresh.log").read_text().splitlines()
    assert {json.loads(line)["target"] for line in log} == set(doc["files"])
    assert "code/server.mjs" in {json.loads(line)["src"] for line in log}
    assert not (host / ".gbrain-source.refresh.log").exists()
    with __import__("tether.state.lock").state.lock.ProjectLock(
        host / "services/voice-agent/.gbrain-source.refresh.lock", command="gbrain"
    ):
        held = run_tether("refresh", "--yes", "-C", str(host))
    assert held.returncode == 1 and held.stderr.startswith("tether: refresh already in progress.")


def test_a_recipe_may_not_ship_gbrains_records_in_its_target_root(installed):
    rec, host = installed
    manifest = json.loads((rec / "install/manifest.json").read_text())
    manifest["files"].append({"src": "src/fake.json", "target": RECORD})
    write_files(rec, {"src/fake.json": "{}\n", "install/manifest.json": json.dumps(manifest)})
    record = (host / RECORD).read_bytes()
    result = run_tether("refresh", "--yes", "-C", str(host))
    assert result.returncode == 1 and "path is reserved" in result.stderr, result.stderr
    assert (host / RECORD).read_bytes() == record


# --- --auto applies to locally-modified files only ------------------------------------------


@pytest.mark.parametrize("auto", ["take-theirs", "keep-mine", "merge"])
def test_auto_never_overwrites_a_host_file_the_recipe_newly_ships(installed, auto):
    rec, host = installed
    (host / ROOT / ".env").write_text("SECRET=the host's own\n")
    manifest = json.loads((rec / "install/manifest.json").read_text())
    manifest["files"].append({"src": "src/.env", "target": f"{ROOT}/.env"})
    write_files(rec, {"src/.env": "SECRET=\n", "install/manifest.json": json.dumps(manifest)})
    code, doc = refresh(host, "--auto", auto)
    assert doc["files"][f"{ROOT}/.env"] == "new-in-source"
    assert (host / ROOT / ".env").read_text() == "SECRET=the host's own\n"
    assert code == 4  # the clash is left for a person


# --- the log never loses an entry; a rerun finishes with the run's own choices -------------


def test_every_overwrite_is_logged_whatever_the_crash_point(installed, tmp_path):
    """Killed at each journal step of a refresh that overwrites a stale file, then rerun:
    the log has that overwrite, and no run logs a file twice."""
    import shutil

    from tether.state import crashpoint
    from tether.state.journal import read_records

    rec, host = installed
    (rec / "src/sync.sh").write_text("#!/bin/sh\necho sync v2\n")
    reference = tmp_path / "reference"
    shutil.copytree(host, reference, symlinks=True)
    assert run_forked("refresh", "--yes", "-C", str(reference)).returncode == 0
    points = crashpoint.points(read_records(reference / ".tether/gbrain/journal.jsonl"))
    assert {"file-written:1", "state-written:1", "run-complete:1"} <= set(points)
    for n, point in enumerate(points):
        trial = tmp_path / f"trial{n}"
        shutil.copytree(host, trial, symlinks=True)
        crashed = run_forked("refresh", "--yes", "-C", str(trial), crash=point)
        assert crashed.returncode == crashpoint.EXIT_CODE, (point, crashed.stderr)
        if not point.startswith("run-complete"):
            assert run_forked("refresh", "--yes", "-C", str(trial)).returncode == 0, point
        lines = log_of(trial)
        assert {"src": "src/sync.sh", "decision": "take-theirs"}.items() <= next(
            line for line in lines if line["target"] == f"{ROOT}/sync.sh"
        ).items(), point
        by_run = [(line.get("run"), line["target"]) for line in lines if line.get("run")]
        assert len(by_run) == len(set(by_run)), point
        assert (trial / ROOT / "sync.sh").read_text() == "#!/bin/sh\necho sync v2\n", point


def test_a_rerun_never_finishes_with_another_auto(installed):
    from tether.state import crashpoint

    rec, host = installed
    _edit_both_sides(rec, host)
    (host / f"{ROOT}/same.md").write_text("same, edited here\n")
    crashed = run_forked(
        "refresh", "--yes", "--auto", "take-theirs", "-C", str(host), crash="file-written:1"
    )
    assert crashed.returncode == crashpoint.EXIT_CODE
    other = run_tether("refresh", "--yes", "--auto", "keep-mine", "-C", str(host))
    assert other.returncode == 1
    assert "'tether refresh --auto take-theirs'" in other.stderr, other.stderr
    check = run_tether("check", "-C", str(host))
    assert "rerun 'tether refresh --auto take-theirs' to finish" in check.stdout
    code, doc = refresh(host, "--auto", "take-theirs")
    assert code == 0, doc
    assert (host / f"{ROOT}/rules.md").read_text() == (rec / "src/rules.md").read_text()
    assert (host / f"{ROOT}/same.md").read_text() == "same\n"


# --- a killed refresh resumes to the same end, conflicts recorded (finalize included) ------


def _conflicting_refresh(rec, host):
    """Three files edited on both sides at the same line (left as patches), one stale."""
    for name in ("rules.md", "same.md", "gone-clean.md"):
        (rec / "src" / name).write_text(BODY.replace("rule 3:", "rule 3 v2:"))
        (host / ROOT / name).write_text(BODY.replace("rule 3:", "rule 3 mine:"))
    (rec / "src/sync.sh").write_text("#!/bin/sh\necho sync v2\n")


def _host_view(host):
    """The host as a person sees it, with the conflict patches: every file but tether's
    runtime files, the records (they carry times) and gbrain's log and lock."""
    return {
        k: v
        for k, v in tree_digest(host).items()
        if (k.startswith(".tether/gbrain/merge/") or not k.startswith(".tether/"))
        and not k.endswith((".refresh.log", ".refresh.lock", ".gbrain-source.json"))
    }


def test_a_refresh_killed_at_any_point_resumes_with_its_conflicts_recorded(installed, tmp_path):
    """Every journal step of a refresh, and the moment after finalize rewrote gbrain's record
    and tether's state but before the journal said so: the rerun ends as the uninterrupted
    run, and check still reports the conflicts left as patches."""
    import shutil

    from tether.state import crashpoint
    from tether.state.journal import read_records

    rec, host = installed
    _conflicting_refresh(rec, host)
    reference = tmp_path / "reference"
    shutil.copytree(host, reference, symlinks=True)
    done = run_forked("refresh", "--yes", "-C", str(reference))
    assert done.returncode == 4, done.stderr
    expected = _host_view(reference)
    expected_check = run_tether("check", "-C", str(reference))
    assert expected_check.returncode == 3 and f"{ROOT}/rules.md" in expected_check.stdout
    points = crashpoint.points(read_records(reference / ".tether/gbrain/journal.jsonl"))
    trials = [(p, False) for p in points] + [("state-written:1", True)]
    for n, (point, before_the_record) in enumerate(trials):
        trial = tmp_path / f"trial{n}"
        shutil.copytree(host, trial, symlinks=True)
        crashed = run_forked("refresh", "--yes", "-C", str(trial), crash=point)
        assert crashed.returncode == crashpoint.EXIT_CODE, (point, crashed.stderr)
        if before_the_record:  # killed after the record and state, before the journal line
            journal = trial / ".tether/gbrain/journal.jsonl"
            lines = journal.read_text().splitlines()
            assert json.loads(lines[-1])["step"] == "state-written"
            journal.write_text("\n".join(lines[:-1]) + "\n")
        if not point.startswith("run-complete"):
            resumed = run_forked("refresh", "--yes", "-C", str(trial))
            assert resumed.returncode == 4, (point, resumed.stderr)
        assert _host_view(trial) == expected, point
        check = run_tether("check", "-C", str(trial))
        assert (check.returncode, check.stdout) == (3, expected_check.stdout), point


def test_the_human_dry_run_lists_every_file_with_its_state(installed):
    rec, host = installed
    _edit_both_sides(rec, host)
    (host / ROOT / "deleted-here.md").unlink()
    result = run_tether("refresh", "--dry-run", "-C", str(host))
    assert result.returncode == 0, result.stderr
    for state, name in [
        ("locally-modified", "rules.md"),
        ("unchanged-stale", "sync.sh"),
        ("unchanged-identical", "same.md"),
        ("host-deleted", "deleted-here.md"),
    ]:
        assert re.search(rf"^  {state} +{ROOT}/{re.escape(name)}$", result.stdout, re.M), (
            result.stdout
        )


def test_a_declared_rename_carries_the_host_edit_to_the_new_path(installed):
    """gbrain's renames table: the renamed source is an update of the host's file."""
    rec, host = installed
    (host / ROOT / "rules.md").write_text(BODY.replace("rule 1:", "rule 1 (ours):"))
    manifest = json.loads((rec / "install/manifest.json").read_text())
    for entry in manifest["files"]:
        if entry["target"] == f"{ROOT}/rules.md":
            entry["src"], entry["target"] = "src/policy.md", f"{ROOT}/policy.md"
    manifest["renames"] = [{"from": f"{ROOT}/rules.md", "to": f"{ROOT}/policy.md"}]
    write_files(
        rec,
        {
            # rewritten past what similarity alone would take for a rename
            "src/policy.md": "".join(BODY.splitlines(True)[:4]) + "new rule (v2)\n" * 6,
            "install/manifest.json": json.dumps(manifest),
        },
    )
    code, doc = refresh(host)
    assert code == 0, doc
    text = (host / ROOT / "policy.md").read_text()
    assert "rule 1 (ours):" in text and "new rule (v2)" in text
    # the old path follows the deletion rules: an edited copy is listed and kept
    assert doc["files"][f"{ROOT}/rules.md"] == "source-deleted"
    assert "rule 1 (ours):" in (host / ROOT / "rules.md").read_text()


def test_an_undeclared_rename_of_a_mostly_unchanged_file_is_followed_too(installed):
    """gbrain's v0 treats it as an add and a delete; tether finds it by similarity, as
    update does, so the host's edit is not left behind at the old path alone."""
    rec, host = installed
    (host / ROOT / "rules.md").write_text(BODY.replace("rule 1:", "rule 1 (ours):"))
    manifest = json.loads((rec / "install/manifest.json").read_text())
    for entry in manifest["files"]:
        if entry["target"] == f"{ROOT}/rules.md":
            entry["src"], entry["target"] = "src/policy.md", f"{ROOT}/policy.md"
    write_files(
        rec,
        {
            "src/policy.md": BODY.replace("rule 8:", "rule 8 (v2):"),
            "install/manifest.json": json.dumps(manifest),
        },
    )
    code, doc = refresh(host)
    assert code == 0, doc
    text = (host / ROOT / "policy.md").read_text()
    assert "rule 1 (ours):" in text and "rule 8 (v2):" in text


def test_a_conflict_left_for_a_hand_merge_names_tether_refresh_to_confirm(installed):
    rec, host = installed
    (rec / "src/rules.md").write_text(BODY.replace("rule 3:", "rule 3 v2:"))
    (host / ROOT / "rules.md").write_text(BODY.replace("rule 3:", "rule 3 mine:"))
    result = run_tether("refresh", "--yes", "-C", str(host))
    assert result.returncode == 4, result.stderr
    assert "then run 'tether refresh' again to confirm" in result.stdout, result.stdout
    assert "tether update" not in result.stdout


def test_auto_take_theirs_cleans_up_the_files_the_recipe_dropped(installed):
    """As gbrain's --auto take-theirs: source-deleted files are removed, backed up first."""
    rec, host = installed
    (host / ROOT / "gone-edited.md").write_text("edited here\n")
    manifest = json.loads((rec / "install/manifest.json").read_text())
    manifest["files"] = [f for f in manifest["files"] if "/gone-" not in f["target"]]
    write_files(rec, {"install/manifest.json": json.dumps(manifest)})
    code, doc = refresh(host, "--auto", "take-theirs")
    assert code == 0, doc
    assert not (host / ROOT / "gone-clean.md").exists()
    assert not (host / ROOT / "gone-edited.md").exists()
    backups = [p for p in (host / ".tether/gbrain/backup").rglob("gone-edited.md")]
    assert [p.read_text() for p in backups] == ["edited here\n"]
    decisions = {line["target"]: line["decision"] for line in log_of(host)}
    assert decisions[f"{ROOT}/gone-edited.md"] == "cleanup"
    code, doc = refresh(host, "--auto", "keep-mine")  # nothing left to clean up
    assert code == 0 and f"{ROOT}/gone-edited.md" not in doc["files"]


def test_files_the_recipe_dropped_are_offered_for_cleanup_one_by_one(installed):
    """At the terminal each source-deleted file is asked about: cleaned up (removed, backed
    up first) or kept."""
    rec, host = installed
    (host / ROOT / "gone-edited.md").write_text("edited here\n")
    manifest = json.loads((rec / "install/manifest.json").read_text())
    manifest["files"] = [f for f in manifest["files"] if "/gone-" not in f["target"]]
    write_files(rec, {"install/manifest.json": json.dumps(manifest)})
    code, out = pty_session(
        ["refresh", "-C", str(host)],
        [
            ("Refresh these files? [y/N]", "y"),
            (f"{ROOT}/gone-clean.md: the recipe no longer ships it", "k"),
            (f"{ROOT}/gone-edited.md: the recipe no longer ships it (edited here)", "c"),
        ],
    )
    assert code == 0, out
    assert (host / ROOT / "gone-clean.md").read_text() == "old\n"
    assert not (host / ROOT / "gone-edited.md").exists()
    backups = list((host / ".tether/gbrain/backup").rglob("gone-edited.md"))
    assert [p.read_text() for p in backups] == ["edited here\n"]
    decisions = {line["target"]: line["decision"] for line in log_of(host)}
    assert decisions[f"{ROOT}/gone-edited.md"] == "cleanup"
    assert decisions[f"{ROOT}/gone-clean.md"] == "keep"
    # a file the recipe dropped is logged by the path the recipe had for it
    sources = {line["target"]: line["src"] for line in log_of(host)}
    assert sources[f"{ROOT}/gone-edited.md"] == "src/gone-edited.md"


# --- a host gbrain installed by itself: its record is the baseline ---------------------------


def gbrain_installed(tmp_path, files):
    """A host as gbrain's own installer leaves it: the recipe's files copied to their
    targets and gbrain's record of them in the target root; no tether state."""
    import hashlib

    rec = recipe(tmp_path / "recipe", files, version="0.3.0")
    host = tmp_path / "host"
    entries = []
    for name, (text, mode) in files.items():
        write_files(host, {f"{ROOT}/{name}": text})
        digest = hashlib.sha256(text.encode()).hexdigest()
        entries.append({"src": f"src/{name}", "target": f"{ROOT}/{name}", "sha256": digest,
                        "mode": mode})  # fmt: skip
    record = {
        "recipe": "brain-sync",
        "gbrain_version": "0.3.0",
        "install_kind": "copy-into-host-repo",
        "copied_at": "2026-05-17T12:00:00Z",
        "files": entries,
    }
    write_files(host, {RECORD: json.dumps(record, indent=2)})
    return rec, host


def test_adopting_gbrains_record_is_a_fact_of_the_init(tmp_path):
    """init's report holds the adoption as a fact; report/notes.py words it (as below)."""
    from tether.flows.install import install_release
    from tether.flows.notes import GbrainRecordAdopted

    rec, host = gbrain_installed(tmp_path, {"a.md": ("a\n", "0644"), "b.md": ("b\n", "0644")})
    report = install_release(host, str(rec), None, "gbrain")
    assert report.notes == [GbrainRecordAdopted(RECORD, "0.3.0", 2)]


def test_a_host_gbrain_installed_itself_is_refreshed_from_gbrains_record(tmp_path):
    """init adopts the record (nothing copied, the record left as gbrain wrote it); refresh
    then classifies each file against the hashes gbrain recorded: a file the host never
    touched is stale (updated), not "locally modified"."""
    rec, host = gbrain_installed(
        tmp_path,
        {
            "stale.md": ("v1\n", "0644"),
            "edited.md": (BODY, "0644"),
            "same.md": ("same\n", "0644"),
            "kept.md": ("kept\n", "0644"),
        },
    )
    (host / ROOT / "edited.md").write_text(BODY.replace("rule 1:", "rule 1 (ours):"))
    (host / ROOT / "kept.md").write_text("kept, edited here\n")
    (rec / "src/stale.md").write_text("v2\n")
    (rec / "src/edited.md").write_text(BODY.replace("rule 8:", "rule 8 (v2):"))
    before = tree_digest(host)
    init = run_tether(
        "init", "--profile", "gbrain", "--source", str(rec), "-C", str(host), "--json"
    )
    assert init.returncode == 0, init.stderr
    doc = json.loads(init.stdout)
    assert doc["added"] == [] and "adopted gbrain's record" in doc["notes"][-1]
    assert sorted(doc["customised"]) == [f"{ROOT}/edited.md", f"{ROOT}/kept.md"]
    after = tree_digest(host)
    assert {p: d for p, d in after.items() if not p.startswith(".tether/")} == before
    code, plan = refresh(host, "--dry-run")
    assert plan["files"] == {
        f"{ROOT}/stale.md": "unchanged-stale",
        f"{ROOT}/edited.md": "locally-modified",
        f"{ROOT}/same.md": "unchanged-identical",
        f"{ROOT}/kept.md": "locally-modified",
    }
    code, done = refresh(host)
    assert code == 4, done  # the edited file moved upstream: no bytes to merge on, a patch
    assert (host / ROOT / "stale.md").read_text() == "v2\n"
    assert (host / ROOT / "kept.md").read_text() == "kept, edited here\n"
    [conflict] = done["buckets"]["conflict"]
    assert conflict["path"] == f"{ROOT}/edited.md" and "only the hash" in conflict["reason"]
    assert "rule 1 (ours)" in (host / ROOT / "edited.md").read_text()


@pytest.mark.parametrize(("auto", "kept"), [("keep-mine", "ours"), ("take-theirs", "v2")])
def test_a_hash_only_baseline_is_settled_whole(tmp_path, auto, kept):
    rec, host = gbrain_installed(tmp_path, {"edited.md": (BODY, "0644")})
    (host / ROOT / "edited.md").write_text(BODY.replace("rule 1:", "rule 1 (ours):"))
    (rec / "src/edited.md").write_text(BODY.replace("rule 8:", "rule 8 (v2):"))
    assert (
        run_tether("init", "--profile", "gbrain", "--source", str(rec), "-C", str(host)).returncode
        == 0
    )
    code, done = refresh(host, "--auto", auto)
    assert code == 0, done
    text = (host / ROOT / "edited.md").read_text()
    assert (f"rule 1 ({kept}):" in text) if kept == "ours" else (f"rule 8 ({kept}):" in text)


@pytest.mark.parametrize("auto", ["ours", "theirs", "merge"])
def test_a_hash_only_baseline_has_no_clashing_lines_to_settle(tmp_path, auto):
    """Without the copied bytes there is no line merge: the recipe's change is left as a
    patch and the host's file stays as it is."""
    rec, host = gbrain_installed(tmp_path, {"edited.md": (BODY, "0644")})
    mine = BODY.replace("rule 1:", "rule 1 (ours):")
    (host / ROOT / "edited.md").write_text(mine)
    (rec / "src/edited.md").write_text(BODY.replace("rule 8:", "rule 8 (v2):"))
    init = ("init", "--profile", "gbrain", "--source", str(rec), "-C", str(host))
    assert run_tether(*init).returncode == 0
    code, done = refresh(host, "--auto", auto)
    assert code == 4, done
    [conflict] = done["buckets"]["conflict"]
    assert conflict["decision"] == "patch" and "only the hash" in conflict["reason"]
    assert (host / ROOT / "edited.md").read_text() == mine


def test_a_record_that_is_not_one_stops_init_and_writes_nothing(tmp_path):
    rec, host = gbrain_installed(tmp_path, {"a.md": ("a\n", "0644")})
    (host / RECORD).write_text(
        json.dumps({"files": [{"target": "../outside", "sha256": "0" * 64}]})
    )
    before = tree_digest(host)
    done = run_tether("init", "--profile", "gbrain", "--source", str(rec), "-C", str(host))
    assert done.returncode == 1 and "not gbrain's record" in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert tree_digest(host) == before
