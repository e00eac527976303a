import json
import os
from pathlib import Path

import pytest

from builders import call, make_release, run_tether, schema_validator, tree_digest, write_files

P = "docs/file.txt"
OTHER = {"keep.txt": "unchanged\n"}


def scenario(tmp_path: Path, cls: str, base, ours, latest, *, extra_v2=None):
    """Release 1.0.0 ships P as ``base`` (None: not shipped), 2.0.0 as ``latest``; the
    adopter's tree has ``ours`` at P (None: absent). Returns the project path."""
    shelf = tmp_path / "releases"
    v1 = dict(OTHER, **({P: base} if base is not None else {}))
    v2 = dict(OTHER, **({P: latest} if latest is not None else {}), **(extra_v2 or {}))
    make_release(shelf, "1.0.0", v1, {P: cls})
    make_release(shelf, "2.0.0", v2, {P: cls})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    target = project / P
    if ours is None:
        target.unlink(missing_ok=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(ours)
    return project


def update_json(project: Path, *extra: str):
    result = run_tether("update", "--yes", "--json", "-C", str(project), *extra)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout)


def bucket_of(doc, path=P):
    for name, entries in doc["buckets"].items():
        for entry in entries:
            if (entry["path"] if isinstance(entry, dict) else entry) == path:
                return name
    return None


CLASSES = ["owned", "shared", "wiki-owned"]


@pytest.mark.parametrize("cls", CLASSES)
def test_row_add_when_absent_on_both_sides(tmp_path, cls):
    project = scenario(tmp_path, cls, None, None, "new\n")
    code, doc = update_json(project)
    assert code == 0 and bucket_of(doc) == "add"
    assert (project / P).read_text() == "new\n"


@pytest.mark.parametrize("cls", CLASSES)
def test_row_respect_deletion(tmp_path, cls):
    project = scenario(tmp_path, cls, "v1\n", None, "v2\n")
    code, doc = update_json(project)
    assert code == 0 and bucket_of(doc) == "removed"
    assert not (project / P).exists()
    # and never resurrected by a later run
    assert update_json(project)[1]["status"] == "up-to-date"
    assert not (project / P).exists()


def test_row_owned_untracked_is_backed_up_and_overwritten(tmp_path):
    project = scenario(tmp_path, "owned", None, "mine\n", "theirs\n")
    code, doc = update_json(project)
    assert code == 0 and bucket_of(doc) == "overwrite"
    assert (project / P).read_text() == "theirs\n"
    assert (project / doc["backup_dir"] / P).read_text() == "mine\n"


@pytest.mark.parametrize("cls", CLASSES)
def test_row_no_upstream_change_keeps_adopter_edit(tmp_path, cls):
    project = scenario(tmp_path, cls, "v1\n", "mine\n", "v1\n")
    code, doc = update_json(project)
    assert code == 0 and bucket_of(doc) == "skip"
    assert (project / P).read_text() == "mine\n"


@pytest.mark.parametrize(
    ("cls", "bucket"), [("owned", "overwrite"), ("shared", "update"), ("wiki-owned", "update")]
)
def test_row_no_adopter_drift_takes_latest(tmp_path, cls, bucket):
    project = scenario(tmp_path, cls, "v1\n", "v1\n", "v2\n")
    code, doc = update_json(project)
    assert code == 0 and bucket_of(doc) == bucket
    assert (project / P).read_text() == "v2\n"
    assert (project / doc["backup_dir"] / P).read_text() == "v1\n"


@pytest.mark.parametrize("cls", CLASSES)
def test_row_already_latest(tmp_path, cls):
    project = scenario(tmp_path, cls, "v1\n", "v2\n", "v2\n")
    code, doc = update_json(project)
    assert code == 0 and bucket_of(doc) == "skip"
    assert doc["backed_up"] == []


@pytest.mark.parametrize("cls", CLASSES)
def test_row_merge_clean(tmp_path, cls):
    base = "".join(f"line {i}\n" for i in range(10))
    ours = base.replace("line 1\n", "line 1 mine\n")
    theirs = base.replace("line 8\n", "line 8 theirs\n")
    project = scenario(tmp_path, cls, base, ours, theirs)
    code, doc = update_json(project)
    assert code == 0 and bucket_of(doc) == "merged"
    merged = (project / P).read_text()
    assert "line 1 mine\n" in merged and "line 8 theirs\n" in merged
    assert (project / doc["backup_dir"] / P).read_text() == ours


@pytest.mark.parametrize("cls", CLASSES)
def test_row_merge_conflict_markers(tmp_path, cls):
    project = scenario(tmp_path, cls, "a\nb\nc\n", "a\nmine\nc\n", "a\ntheirs\nc\n")
    code, doc = update_json(project, "--conflict", "markers")
    assert code == 4 and bucket_of(doc) == "conflict"
    text = (project / P).read_text()
    assert "<<<<<<< ours\nmine\n||||||| base\nb\n=======\ntheirs\n>>>>>>> theirs\n" in text
    assert doc["buckets"]["conflict"][0]["artifact"] == P
    assert doc["state_written"] is True
    status = json.loads(run_tether("status", "--json", "-C", str(project)).stdout)
    assert status["conflicts"][0]["path"] == P
    result = run_tether("check", "--json", "-C", str(project))
    assert result.returncode == 3 and "unresolved-conflicts" in json.loads(result.stdout)["reasons"]
    (project / P).write_text("a\nresolved\nc\n")
    result = run_tether("check", "--json", "-C", str(project))
    assert "unresolved-conflicts" not in json.loads(result.stdout)["reasons"]
    assert result.returncode == (3 if cls == "owned" else 0)  # resolved owned drift still shows


def test_merge_conflict_patch_keeps_file_and_rerun_does_not_recreate(tmp_path):
    project = scenario(tmp_path, "shared", "a\nb\nc\n", "a\nmine\nc\n", "a\ntheirs\nc\n")
    code, doc = update_json(project, "--conflict", "patch")
    assert code == 4
    assert (project / P).read_text() == "a\nmine\nc\n"
    patch = project / ".tether/merge" / (P + ".patch")
    assert doc["buckets"]["conflict"][0]["artifact"] == ".tether/merge/" + P + ".patch"
    assert "-mine\n+theirs\n" in patch.read_text()
    assert call("check", "-C", str(project)) == 3
    patch.unlink()
    assert call("check", "-C", str(project)) == 0
    code, doc = update_json(project)
    assert doc["status"] == "up-to-date" and not patch.exists()


def test_shared_file_added_on_both_sides_differently_conflicts(tmp_path):
    project = scenario(tmp_path, "shared", None, "mine\n", "theirs\n")
    code, doc = update_json(project)
    assert code == 4 and bucket_of(doc) == "conflict"


def test_dropped_paths_delete_removed_and_on_request(tmp_path):
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", {"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n", "k.txt": "k\n"})
    make_release(shelf, "2.0.0", {"k.txt": "k\n"})
    project = tmp_path / "proj"
    call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    (project / "b.txt").write_text("b edited\n")
    (project / "c.txt").unlink()
    code, doc = update_json(project, "--dry-run")
    assert doc["buckets"]["delete"] == ["a.txt", "b.txt"] and doc["buckets"]["removed"] == ["c.txt"]
    code, doc = update_json(project, "--delete-removed")
    assert code == 0
    assert doc["buckets"]["deleted"] == ["a.txt"]
    assert doc["buckets"]["delete"] == ["b.txt"]  # modified: only listed
    assert not (project / "a.txt").exists()
    assert (project / doc["backup_dir"] / "a.txt").read_text() == "a\n"
    assert (project / "b.txt").read_text() == "b edited\n"


def test_adopter_owned_and_sentinels_untouched(tmp_path):
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", {"a.txt": "a\n"}, sentinels={"CHANGELOG.md": "v1 log\n"})
    make_release(shelf, "2.0.0", {"a.txt": "a2\n"}, sentinels={"CHANGELOG.md": "v2 log\n"})
    project = tmp_path / "proj"
    call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    write_files(project, {"CHANGELOG.md": "my log\n", "mine/notes.md": "n\n", "a.txt.orig": "x"})
    before = {k: v for k, v in tree_digest(project).items() if not k.startswith(".tether")}
    _code, _ = update_json(project)
    after = tree_digest(project)
    for rel in ("CHANGELOG.md", "mine/notes.md", "a.txt.orig"):
        assert after[rel] == before[rel]
    assert after["a.txt"] == b"a2\n"


def test_dry_run_writes_nothing(tmp_path):
    project = scenario(
        tmp_path,
        "shared",
        "a\nb\nc\n",
        "a\nmine\nc\n",
        "a\ntheirs\nc\n",
        extra_v2={"new.txt": "n\n"},
    )
    before = {k: v for k, v in tree_digest(project).items() if "/cache/" not in k}
    result = run_tether("update", "--dry-run", "-C", str(project))
    assert result.returncode == 0, result.stderr
    assert "dry run" in result.stdout
    after = {k: v for k, v in tree_digest(project).items() if "/cache/" not in k}
    assert after == before


def test_idempotent_rerun(tmp_path):
    project = scenario(tmp_path, "shared", "v1\n", "v1\n", "v2\n", extra_v2={"new.txt": "n\n"})
    code, doc = update_json(project)
    assert code == 0 and doc["status"] == "updated"
    snapshot = tree_digest(project)
    code, doc = update_json(project)
    assert code == 0 and doc["status"] == "up-to-date"
    assert tree_digest(project) == snapshot
    assert "already up to date" in run_tether("update", "--yes", "-C", str(project)).stdout


def test_refuses_without_yes_when_not_a_terminal(tmp_path):
    project = scenario(tmp_path, "shared", "v1\n", "v1\n", "v2\n")

    def project_files() -> dict[str, bytes]:  # tether's own cache may learn file hashes
        return {k: v for k, v in tree_digest(project).items() if not k.startswith(".tether/cache")}

    before = project_files()
    result = run_tether("update", "-C", str(project), input="")
    assert result.returncode != 0
    assert "--yes" in result.stderr and "Traceback" not in result.stderr
    assert project_files() == before


def test_refuses_downgrade_and_unknown_version(tmp_path):
    project = scenario(tmp_path, "shared", "v1\n", "v1\n", "v2\n")
    update_json(project)
    result = run_tether("update", "--yes", "--to", "1.0.0", "-C", str(project))
    assert result.returncode == 1 and "downgrade" in result.stderr
    result = run_tether("update", "--yes", "--to", "7.0.0", "-C", str(project))
    assert result.returncode == 1 and "7.0.0" in result.stderr and "Traceback" not in result.stderr


def test_failed_paths_do_not_stop_the_rest_and_state_stays(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    project = scenario(
        tmp_path,
        "shared",
        "v1\n",
        "v1\n",
        "v2\n",
        extra_v2={"linked/x.txt": "x\n", "dir.txt": "d\n"},
    )
    os.symlink(outside, project / "linked")
    (project / "dir.txt").mkdir()
    code, doc = update_json(project)
    assert code == 1
    failed = {f["path"]: f["reason"] for f in doc["buckets"]["failed"]}
    assert "outside the project" in failed["linked/x.txt"]
    assert "directory" in failed["dir.txt"]
    assert list(outside.iterdir()) == []
    assert (project / P).read_text() == "v2\n"  # the rest applied
    assert doc["state_written"] is False
    state = json.loads((project / ".tether/state.json").read_text())
    assert state["version"] == "1.0.0"


def test_backup_pruning_keeps_last_five_and_merge_folder_is_kept(tmp_path):
    shelf = tmp_path / "releases"
    versions = [f"1.{i}.0" for i in range(9)]
    for i, v in enumerate(versions):
        make_release(
            shelf, v, {"a.txt": f"{i}\n", "c.txt": "a\nb\nc\n" if i == 0 else f"a\nt{i}\nc\n"}
        )
    project = tmp_path / "proj"
    call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    (project / "c.txt").write_text("a\nmine\nc\n")
    code, doc = update_json(project, "--to", "1.1.0", "--conflict", "patch")
    assert code == 4
    for v in versions[2:]:
        code, doc = update_json(project, "--to", v)
    runs = sorted((project / ".tether/backup").iterdir())
    assert len(runs) == 6  # five earlier runs plus the newest
    assert code == 4  # c.txt kept its markers from 1.2.0: held, never merged again
    assert doc["earlier_artifacts"] == [".tether/merge/c.txt.patch"]
    assert (project / ".tether/merge/c.txt.patch").exists()
    human = run_tether("status", "-C", str(project)).stdout
    assert "c.txt" in human


def test_summary_rows(tmp_path):
    project = scenario(tmp_path, "shared", "a\nb\nc\n", "a\nmine\nc\n", "a\ntheirs\nc\n")
    result = run_tether("update", "--yes", "-C", str(project))
    assert result.returncode == 4
    out = result.stdout
    assert out.startswith("tether update: 1.0.0 → 2.0.0")
    assert "Conflicts (markers in the files)" in out
    assert "Merged (your edits kept)" in out
    assert "Overwritten" not in out
    assert "Next steps:" in out


def test_json_report_validates_against_schema(tmp_path):
    import jsonschema

    schema = schema_validator("update-report")
    project = scenario(
        tmp_path,
        "shared",
        "a\nb\nc\n",
        "a\nmine\nc\n",
        "a\ntheirs\nc\n",
        extra_v2={"new.txt": "n\n"},
    )
    _, dry = update_json(project, "--dry-run")
    schema.validate(dry)
    _, applied = update_json(project)
    schema.validate(applied)
    _, again = update_json(project)
    schema.validate(again)
    with pytest.raises(jsonschema.ValidationError):
        schema.validate({**applied, "buckets": {"add": "x"}})


def test_parent_that_is_a_file_fails_only_that_path(tmp_path):
    project = scenario(tmp_path, "shared", "v1\n", "v1\n", "v2\n", extra_v2={"sub/x.txt": "x\n"})
    (project / "sub").write_text("I am a file where the release wants a folder\n")
    code, doc = update_json(project)
    assert code == 1
    failed = {f["path"]: f["reason"] for f in doc["buckets"]["failed"]}
    assert "sub is a file" in failed["sub/x.txt"]
    assert (project / "sub").read_text().startswith("I am a file")
    assert (project / P).read_text() == "v2\n"
    assert doc["state_written"] is False


def test_manifest_hashes_are_trusted_for_skips_and_checked_when_read(tmp_path):
    import hashlib

    shelf = tmp_path / "releases"
    v1 = {"a.txt": "a1\n", "same.txt": "same\n"}
    v2 = {"a.txt": "a2\n", "same.txt": "same\n"}
    for version, files in (("1.0.0", v1), ("2.0.0", v2)):
        hashes = {p: hashlib.sha256(t.encode()).hexdigest() for p, t in files.items()}
        entries = {p: {"class": "shared", "sha256": h} for p, h in hashes.items()}
        make_release(shelf, version, files, extra={"files": entries})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    (shelf / "2.0.0" / "a.txt").write_text("tampered\n")  # no longer what the manifest says
    result = run_tether("update", "--yes", "-C", str(project))
    assert result.returncode == 1
    assert "a.txt does not match the sha256 its manifest records" in result.stderr
    assert (project / "a.txt").read_text() == "a1\n"
    (shelf / "2.0.0" / "a.txt").write_text("a2\n")
    code, doc = update_json(project)
    assert code == 0 and doc["buckets"]["update"] == ["a.txt"]
    assert (project / "a.txt").read_text() == "a2\n"


def test_pristine_entries_link_only_trees_tether_extracted(tmp_path):
    import hashlib

    from helpers_sources import release_tar
    from tether.flows.project import open_project

    dist = tmp_path / "dist"
    dist.mkdir()
    manifest = '{"schema_version": 1, "name": "kit", "version": "%s", "files": {"a.txt": "shared"}}'
    for version, text in (("1.0.0", "a1\n"), ("2.0.0", "a2\n")):
        release_tar(
            dist / f"kit-v{version}.tar.gz",
            {"a.txt": text, ".tether/manifest.json": manifest % version},
            top=f"kit-v{version}",
        )
    project = tmp_path / "proj"
    assert (
        call(
            "init",
            "--source",
            str(dist / "kit-v{version}.tar.gz"),
            "--to",
            "1.0.0",
            "-C",
            str(project),
        )
        == 0
    )
    code, _ = update_json(project)
    assert code == 0
    digest = hashlib.sha256(b"a2\n").hexdigest()
    entry = project / ".tether/cache/objects" / digest[:2] / digest[2:]
    assert entry.read_bytes() == b"a2\n" and entry.stat().st_nlink >= 2  # linked, not copied
    # a user's release folder is copied (into a pack): rewriting it in place must not
    # touch the cache
    shelf_project = scenario(tmp_path / "shelf", "shared", "v1\n", "v1\n", "v2\n")
    update_json(shelf_project)
    digest = hashlib.sha256(b"v2\n").hexdigest()
    objects = shelf_project / ".tether/cache/objects"
    assert not (objects / digest[:2] / digest[2:]).exists()
    with open(tmp_path / "shelf/releases/2.0.0" / P, "r+b") as handle:
        handle.write(b"XX")  # in place
    assert open_project(shelf_project).pristine.get(digest) == b"v2\n"


def test_rows_that_ignore_the_adopter_bytes_really_do():
    from itertools import product

    from tether.engine.decide import Comparison, decide_row, row_ignores_adopter_bytes
    from tether.model.manifest import FileClass

    ignored = 0
    for cls, base, ours, b_eq_l in product(FileClass, *[(False, True)] * 3):
        if not row_ignores_adopter_bytes(cls, base, ours, b_eq_l):
            continue
        ignored += 1
        rows = {
            decide_row(cls, Comparison(base, ours, b_eq_l, eq_base, eq_latest))
            for eq_base, eq_latest in product((False, True), repeat=2)
        }
        assert len(rows) == 1, (cls, base, ours, b_eq_l, rows)
    assert ignored >= 2 * len(FileClass)


def test_a_fifo_at_a_managed_path_fails_that_path_without_waiting(tmp_path):
    project = scenario(tmp_path, "shared", "v1\n", "v1\n", "v2\n")
    (project / P).unlink()
    os.mkfifo(project / P)
    result = run_tether("update", "--yes", "--json", "-C", str(project))  # 120 s timeout
    assert result.returncode == 1, result.stderr
    failed = {f["path"]: f["reason"] for f in json.loads(result.stdout)["buckets"]["failed"]}
    assert "not a regular file" in failed[P]


def test_update_reads_only_files_upstream_changed(tmp_path):
    """A fresh clone has no stat cache; the plan hashes (and so records) only what it read."""
    project = scenario(tmp_path, "shared", "v1\n", "v1 mine\n", "v2\n")
    (project / "keep.txt").write_text("unchanged, but edited here\n")
    (project / ".tether/cache/stat.json").unlink(missing_ok=True)
    code, doc = update_json(project, "--dry-run")
    assert code in (0, 4) and "keep.txt" in doc["buckets"]["skip"]
    recorded = json.loads((project / ".tether/cache/stat.json").read_text())["files"]
    assert P in recorded and "keep.txt" not in recorded
    assert (project / "keep.txt").read_text() == "unchanged, but edited here\n"


def test_state_mode_follows_the_bytes_tether_installed(tmp_path):
    """A file whose bytes changed is recorded with the release's mode; one whose bytes did
    not change keeps its recorded mode, as tether applies content, not mode-only changes."""
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", {"run.sh": "echo 1\n", "tool.sh": "echo t\n"})
    make_release(shelf, "2.0.0", {"run.sh": "echo 2\n", "tool.sh": "echo t\n"})
    (shelf / "2.0.0/run.sh").chmod(0o755)
    (shelf / "2.0.0/tool.sh").chmod(0o755)  # a mode-only change upstream
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    code, doc = update_json(project)
    assert code == 0 and doc["buckets"]["update"] == ["run.sh"]
    files = json.loads((project / ".tether/state.json").read_text())["files"]
    assert files["run.sh"]["mode"] == oct(0o755)
    assert files["tool.sh"]["mode"] == oct(0o644)
    assert (project / "tool.sh").stat().st_mode & 0o777 == 0o644
