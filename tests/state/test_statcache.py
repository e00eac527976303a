"""The stat cache lets status skip unchanged files, and never hides a change."""

import hashlib
import json
import os
import shutil
import time

from builders import call, make_release, run_tether, write_files
from tether.state.statcache import RACY_MARGIN_NS, StatCache


def project_with(tmp_path, n=5):
    shelf = tmp_path / "rel"
    make_release(shelf, "1.0.0", {f"f{i}.txt": f"content {i}\n" for i in range(n)})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    return project


def status(project):
    return json.loads(run_tether("status", "--json", "-C", str(project)).stdout)


def age_cache(project):
    """Pretend the cache was written long after the files were, so entries are trusted."""
    path = project / ".tether/cache/stat.json"
    doc = json.loads(path.read_text())
    doc["written_ns"] = time.time_ns() + 10 * RACY_MARGIN_NS
    path.write_text(json.dumps(doc))


def test_install_records_and_status_trusts_unchanged_files(tmp_path):
    project = project_with(tmp_path)
    cache = StatCache(project / ".tether/cache/stat.json")
    assert set(cache.entries) == {f"f{i}.txt" for i in range(5)}
    age_cache(project)
    info = os.stat(project / "f0.txt")
    assert StatCache(project / ".tether/cache/stat.json").lookup("f0.txt", info) is not None
    assert status(project)["clean"] == 5


def test_install_records_every_file_it_read_or_wrote_with_the_hash_of_its_bytes(tmp_path):
    """Written, identical and customised files alike: each entry holds the sha256 of the
    bytes the file holds and that file's stat (no entry for a file init never looked at)."""
    shelf = tmp_path / "rel"
    make_release(shelf, "1.0.0", {"new.txt": "new\n", "same.txt": "same\n", "mine.txt": "v1\n"})
    project = tmp_path / "proj"
    write_files(project, {"same.txt": "same\n", "mine.txt": "my own\n", "other.txt": "x\n"})
    # --restore-missing: an existing project lacking new.txt would otherwise keep it absent.
    init = ("init", "--source", str(shelf), "--to", "1.0.0", "--restore-missing")
    assert call(*init, "-C", str(project)) == 0
    entries = StatCache(project / ".tether/cache/stat.json").entries
    assert set(entries) == {"new.txt", "same.txt", "mine.txt"}
    for rel, entry in entries.items():
        info = os.stat(project / rel)
        assert list(entry) == [
            info.st_size,
            info.st_mtime_ns,
            info.st_ctime_ns,
            info.st_ino,
            hashlib.sha256((project / rel).read_bytes()).hexdigest(),
        ], rel


def test_same_size_edit_with_restored_mtime_is_still_seen(tmp_path):
    project = project_with(tmp_path)
    age_cache(project)
    target = project / "f1.txt"
    before = os.stat(target)
    target.write_text("CONTENT 1\n")  # same size
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))  # mtime put back
    assert status(project)["modified"] == ["f1.txt"]


def test_racy_entries_are_not_trusted(tmp_path):
    project = project_with(tmp_path)
    # no ageing: the files were written moments before the cache, so every entry is racy
    info = os.stat(project / "f2.txt")
    assert StatCache(project / ".tether/cache/stat.json").lookup("f2.txt", info) is None
    (project / "f2.txt").write_text("content X\n")
    assert status(project)["modified"] == ["f2.txt"]


def test_a_broken_cache_is_an_empty_cache(tmp_path):
    project = project_with(tmp_path)
    (project / ".tether/cache/stat.json").write_text("{not json")
    assert status(project)["clean"] == 5


def test_malformed_entries_never_match_and_never_crash(tmp_path):
    project = project_with(tmp_path)
    path = project / ".tether/cache/stat.json"
    doc = json.loads(path.read_text())
    info = os.stat(project / "f0.txt")
    good = [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, "ab" * 32]
    doc["written_ns"] = time.time_ns() + 10 * RACY_MARGIN_NS
    for bad in ({"size": 1}, "abcde", [1, 2, 3], [*good[:4], 7], None):
        doc["files"]["f0.txt"] = bad
        path.write_text(json.dumps(doc))
        assert StatCache(path).lookup("f0.txt", info) is None, bad
    doc["files"]["f0.txt"] = good
    path.write_text(json.dumps(doc))
    assert StatCache(path).lookup("f0.txt", info) == "ab" * 32
    doc["files"] = ["not", "a", "mapping"]
    path.write_text(json.dumps(doc))
    assert StatCache(path).entries == {}
    assert status(project)["clean"] == 5


def test_status_leaves_the_cache_to_a_run_holding_the_lock(tmp_path):
    """While an update holds the project lock, its stat cache is the one kept: status (which
    never takes the lock) reads the tree but does not write its own entries over the run's."""
    from tether.state.lock import ProjectLock

    project = project_with(tmp_path)
    (project / "f0.txt").write_text("edited\n")  # status hashes it: a new entry to save
    cache_path = project / ".tether/cache/stat.json"
    before = cache_path.read_bytes()
    with ProjectLock(project / ".tether/lock", command="update"):
        assert status(project)["modified"] == ["f0.txt"]
        assert cache_path.read_bytes() == before
    assert status(project)["modified"] == ["f0.txt"]
    assert cache_path.read_bytes() != before
    assert "f0.txt" in StatCache(cache_path).entries


def test_a_status_past_the_racy_window_settles_the_entries_init_recorded(tmp_path, monkeypatch):
    """init records its files right after writing them, so the cache it saves cannot vouch
    for them yet. A status once the racy window has passed hashes them, finds the same
    entries and must save the cache anyway: otherwise every later status hashes them again."""
    project = project_with(tmp_path)
    cache_path = project / ".tether/cache/stat.json"
    # As a quick init leaves it, however long this one took: saved right after the writes.
    doc = json.loads(cache_path.read_text())
    doc["written_ns"] = max(os.stat(project / f"f{i}.txt").st_ctime_ns for i in range(5)) + 1
    cache_path.write_text(json.dumps(doc))
    info = os.stat(project / "f0.txt")
    assert StatCache(cache_path).lookup("f0.txt", info) is None  # racy
    later = time.time_ns() + 10 * RACY_MARGIN_NS
    monkeypatch.setattr(time, "time_ns", lambda: later)  # the clock, past the racy window
    assert json.loads(run_tether("status", "--json", "-C", str(project)).stdout)["clean"] == 5
    settled = StatCache(cache_path)
    assert settled.written_ns == later
    for i in range(5):
        name = f"f{i}.txt"
        assert settled.lookup(name, os.stat(project / name)) is not None, name


def test_an_entry_recorded_again_within_the_racy_window_leaves_the_cache_unsaved(
    tmp_path, monkeypatch
):
    """Saving again right away would not make a racy entry trusted: nothing is written."""
    project = project_with(tmp_path)
    info = os.stat(project / "f0.txt")
    changed = max(info.st_mtime_ns, info.st_ctime_ns)
    cache = StatCache(project / ".tether/cache/stat.json")
    cache.written_ns = changed + 1  # saved right after the write
    monkeypatch.setattr(time, "time_ns", lambda: changed + RACY_MARGIN_NS // 2)
    cache.record("f0.txt", info, str(cache.entries["f0.txt"][4]))
    assert not cache.dirty
    monkeypatch.setattr(time, "time_ns", lambda: changed + 2 * RACY_MARGIN_NS)
    cache.record("f0.txt", info, str(cache.entries["f0.txt"][4]))
    assert cache.dirty  # past the window: saving now makes it trusted


# --- what the cache learnt about the installed manifest -------------------------------------


def facts(project):
    return json.loads((project / ".tether/cache/stat.json").read_text()).get("facts", {})


def test_a_clean_status_reads_no_manifest_once_it_knows_it_hands_nothing_over(tmp_path):
    """The first status learns, from the manifest the state records, that the installed
    release hands no path over; the next one neither reads nor hashes a manifest for it:
    with every copy of the manifest and the release's source gone, it still reports."""
    project = project_with(tmp_path)
    assert status(project)["clean"] == 5
    assert list(facts(project).values()) == ["hands-nothing-over"]
    age_cache(project)
    for gone in (project / ".tether/cache/objects", tmp_path / "rel"):
        shutil.rmtree(gone)
    (project / ".tether/manifest.json").unlink()
    doc = status(project)
    assert (doc["clean"], doc["modified"], doc["deleted"]) == (5, [], [])


def test_a_release_that_hands_a_path_over_is_read_again_after_an_update(tmp_path):
    """The fact is kept under the manifest's digest: an update to a release that hands a
    path over is another manifest, read and honoured by every status after it."""
    shelf = tmp_path / "rel"
    files = {"a.txt": "a\n", "b.txt": "b\n"}
    make_release(shelf, "1.0.0", files)
    hand_off = {"ownership": [{"paths": ["b.txt"], "when": {"exists": "a.txt"}}]}
    make_release(shelf, "1.1.0", files, extra=hand_off)
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    (project / "b.txt").write_text("mine\n")
    assert status(project)["modified"] == ["b.txt"]
    learnt = facts(project)
    assert list(learnt.values()) == ["hands-nothing-over"]
    update = ["update", "--yes", "--no-branch", "--to", "1.1.0", "-C", str(project)]
    assert call(*update) == 0
    for _ in range(2):  # the second one with whatever the first one saved
        doc = status(project)
        assert doc["adopter_owned"] == ["b.txt"]
        assert doc["modified"] == []
    assert facts(project) == learnt  # nothing learnt for 1.1.0's manifest
    assert run_tether("check", "-C", str(project)).returncode == 0


def test_what_another_tether_version_learnt_about_the_manifest_is_asked_again(
    tmp_path, monkeypatch
):
    """The answer depends on the tether reading the manifest as well as on its bytes: a
    version that did not know a hand-off declaration learnt "hands nothing over" for a
    manifest that does hand a path over. After an upgrade the same bytes are read again, so
    the handed-over path is not reported as drift."""
    import tether
    from tether.flows import baseline as baseline_module
    from tether.model.lifecycle import Lifecycle

    shelf = tmp_path / "rel"
    hand_off = {"ownership": [{"paths": ["b.txt"], "when": {"exists": "a.txt"}}]}
    make_release(shelf, "1.0.0", {"a.txt": "a\n", "b.txt": "b\n"}, extra=hand_off)
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    (project / "b.txt").write_text("mine\n")

    parse = baseline_module.parse_manifest

    def without_hand_offs(*args, **kwargs):  # what a version without hand-offs read
        manifest = parse(*args, **kwargs)
        manifest.__dict__["lifecycle"] = Lifecycle()
        return manifest

    with monkeypatch.context() as older:
        older.setattr(tether, "__version__", "0.0.1")
        older.setattr(baseline_module, "parse_manifest", without_hand_offs)
        assert status(project)["modified"] == ["b.txt"]  # what that version reported
    assert list(facts(project).values()) == ["hands-nothing-over"]
    doc = status(project)
    assert (doc["adopter_owned"], doc["modified"]) == (["b.txt"], [])


# --- hashes taken within the racy window ------------------------------------------------


def sha(data):
    return hashlib.sha256(data).hexdigest()


def test_a_hash_taken_within_the_racy_window_is_not_vouched_for_by_a_later_save(
    tmp_path, monkeypatch
):
    """A file hashed moments after it changed can change again in the same timestamp tick
    after the read (a tick is a jiffy, or a second or two on coarse file systems): its stat
    stays as it was over other bytes, so no stat key tells. The entry is only as good as the
    moment of its hash, whenever the run gets to save: a status of a large tree that saves
    seconds later must not vouch for it."""
    target = tmp_path / "f.txt"
    target.write_bytes(b"after\n")
    info = os.stat(target)  # the stat the write in the same tick left
    cache_path = tmp_path / "cache" / "stat.json"
    cache_path.parent.mkdir()
    cache = StatCache(cache_path)
    cache.record("f.txt", info, sha(b"befor\n"))  # what the read saw before that write
    later = time.time_ns() + 2 * RACY_MARGIN_NS
    monkeypatch.setattr(time, "time_ns", lambda: later)  # the save, seconds after the hash
    cache.save()
    assert StatCache(cache_path).lookup("f.txt", info) is None


def test_a_racy_entry_no_run_hashed_again_stays_untrusted_when_the_cache_is_saved(
    tmp_path, monkeypatch
):
    """An entry the last save could not vouch for (hashed right after its write, as init and
    update record theirs) is trusted only once a hash taken past the window confirms it. A
    later run that never looks at its path (one taken over with ``tether own``) and saves
    the cache for another file must not make it trusted unread."""
    written = tmp_path / "written.txt"
    written.write_bytes(b"as hashed\n")
    written_info = os.stat(written)
    cache_path = tmp_path / "cache" / "stat.json"
    cache_path.parent.mkdir()
    first = StatCache(cache_path)
    first.record("written.txt", written_info, sha(b"as hashed\n"))
    first.save()
    assert StatCache(cache_path).lookup("written.txt", written_info) is None  # racy
    other = tmp_path / "other.txt"
    other.write_bytes(b"other\n")
    later = time.time_ns() + 2 * RACY_MARGIN_NS
    monkeypatch.setattr(time, "time_ns", lambda: later)  # a run past the window
    second = StatCache(cache_path)
    second.record("other.txt", os.stat(other), sha(b"other\n"))
    second.save()
    assert StatCache(cache_path).lookup("other.txt", os.stat(other)) == sha(b"other\n")
    assert StatCache(cache_path).lookup("written.txt", written_info) is None


def test_init_vouches_for_a_file_it_read_only_as_of_when_it_read_it(tmp_path, monkeypatch):
    """init reads the files already there first and records them after the release is
    fetched, checked and written, which can take seconds. A file edited just before the
    read is racy as of the read, however late the record and the save come."""
    from builders import call as call_in_process
    from tether.flows import install

    shelf = tmp_path / "rel"
    make_release(shelf, "1.0.0", {"mine.txt": "v1\n", "new.txt": "new\n"})
    project = tmp_path / "proj"
    write_files(project, {"mine.txt": "my own\n"})  # edited just now
    real_time_ns = time.time_ns
    later = []

    def clock():
        return real_time_ns() + (3 * RACY_MARGIN_NS if later else 0)

    read_project = install._classify_targets

    def read_then_take_seconds(*args, **kwargs):
        found = read_project(*args, **kwargs)
        later.append(True)  # fetching and checking the release took this long
        return found

    monkeypatch.setattr(time, "time_ns", clock)
    monkeypatch.setattr(install, "_classify_targets", read_then_take_seconds)
    init = ("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project))
    assert call_in_process(*init) == 0
    assert later
    cache = StatCache(project / ".tether/cache/stat.json")
    assert "mine.txt" in cache.entries
    assert cache.lookup("mine.txt", os.stat(project / "mine.txt")) is None


def test_a_project_copied_with_cp_a_trusts_nothing_its_copied_cache_says(tmp_path):
    """``cp -a`` keeps sizes and modification times, and copies the git-ignored cache with
    them: the copy's files have other inodes and change times, so none of the copied entries
    vouches for them, and a same-size edit whose time is set back is still seen."""
    import subprocess

    project = project_with(tmp_path)
    age_cache(project)
    assert status(project)["clean"] == 5
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(project), str(copy)], check=True)
    target = copy / "f3.txt"
    before = os.stat(target)
    target.write_text("CONTENT 3\n")  # same size
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    cache = StatCache(copy / ".tether/cache/stat.json")
    assert cache.entries  # the copied cache, entries and all
    for i in range(5):
        name = f"f{i}.txt"
        assert cache.lookup(name, os.stat(copy / name)) is None, name
    assert status(copy)["modified"] == ["f3.txt"]
