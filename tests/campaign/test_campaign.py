"""``tether campaign``: real repositories served as ``file://`` remotes (bare clones built in
tmp_path), a registry of remote and local entries, and the durable records a campaign keeps.
Interruptions are real: the coordinator runs as its own process and dies through the
crash-point fault injection (state/crashpoint.py), then a second process continues."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from builders import git, run_forked, run_tether, tree_digest
from tests.campaign.conftest import Seeds, build_repository
from tether.campaign.model import CLONED, RepoRecord, Settings
from tether.campaign.store import RECORD_STEP, CampaignFolder
from tether.campaign.units import fetch_unit, update_unit
from tether.errors import Exit
from tether.report.campaign import TRAILER
from tether.state import crashpoint
from tether.state.lock import ProjectLock

BRANCH = "tether/update-acme-kit-1.1.0"


@dataclass
class World:
    tmp: Path
    shelf: Path
    registry: Path
    campaigns: Path
    seeds: Seeds
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)

    def repo(
        self,
        name: str,
        *,
        edit: str | None = None,
        shelf: Path | None = None,
        branch: str = "main",
    ) -> Path:
        """A working repository with the release installed and committed; ``edit`` is this
        repository's own c.txt."""
        root = self.tmp / "seeds" / name
        build_repository(root, shelf or self.shelf, edit, branch)
        return root

    def remote(
        self,
        name: str,
        *,
        edit: str | None = None,
        shelf: Path | None = None,
        branch: str = "main",
    ) -> Path:
        """A bare repository holding what ``repo(name)`` holds (a copy of the one of its kind
        the test process built, tests/campaign/conftest.py), registered by its ``file://``
        URL."""
        built = self.seeds.bare(shelf or self.shelf, edit, branch)
        bare = self.seeds.copy(built, self.tmp / "remotes" / f"{name}.git")
        self.add(name, {"url": bare.as_uri()})
        return bare

    def add(self, name: str, entry: dict[str, Any]) -> None:
        self.entries[name] = {"name": name, **entry}
        document = {"version": 2, "projects": self.entries}
        self.registry.write_text(json.dumps(document, indent=2))

    def start(self, *extra: str, name: str = "c1", to: str = "1.1.0") -> tuple[int, dict]:
        return cli("start", name, "--upstream", "acme-kit", "--to", to, *self.where(), *extra)

    def run(self, name: str = "c1", *, jobs: str | None = "1") -> tuple[int, dict]:
        """``campaign run`` in this process's coordinator (-j 1) unless ``jobs`` says
        otherwise (None: the default pool): the executors have their own tests
        (tests/campaign/test_campaign_exec.py), and a pool's workers cost time a run."""
        flags = ("-j", jobs) if jobs else ()
        return cli("run", name, "--dir", str(self.campaigns), *flags)

    def status(self, name: str = "c1") -> tuple[int, dict]:
        return cli("status", name, "--dir", str(self.campaigns))

    def where(self) -> list[str]:
        return ["--registry", str(self.registry), "--dir", str(self.campaigns)]


def cli(*args: str) -> tuple[int, dict]:
    done = run_tether("campaign", *args, "--json")
    return done.returncode, json.loads(done.stdout)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, seeds: Seeds) -> World:
    """The test's own registry and campaigns folder; the releases (acme-kit 1.0.0 and 1.1.0 in
    ``shelf``) are the test process's, read only."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    made = World(tmp_path, seeds.shelf, tmp_path / "registry.json", tmp_path / "campaigns", seeds)
    capsys.readouterr()
    return made


def by_name(document: dict) -> dict[str, dict]:
    return {r["name"]: r for r in document["repositories"]}


def mirror_of(world: World, record: dict) -> Path:
    return CampaignFolder(world.campaigns / "c1").mirror_path(record["url"])


def show(repo: Path, rev: str, path: str) -> str:
    return git(repo, "show", f"{rev}:{path}")


# --- one run -----------------------------------------------------------------------------


def test_run_commits_clean_updates_holds_conflicts_and_fails_one_repository_at_a_time(
    world: World,
) -> None:
    p1 = world.remote("p1")
    world.remote("p2", edit="x\nmine\nz\n")
    world.add("gone", {"url": (world.tmp / "nowhere.git").as_uri()})
    world.remote("p3", shelf=world.seeds.other_shelf)  # follows other-kit
    remote_refs = git(p1, "for-each-ref")

    code, started = world.start()
    assert code == 0
    assert [r["status"] for r in started["repositories"]] == ["pending"] * 4

    code, ran = world.run(jobs=None)  # the default: a process pool
    assert code == Exit.ERROR  # a repository failed; the others still ran
    rows = by_name(ran)
    assert [r["name"] for r in ran["repositories"]] == ["p1", "p2", "gone", "p3"]
    assert {n: r["status"] for n, r in rows.items()} == {
        "p1": "updated",
        "p2": "conflicts",
        "gone": "failed",
        "p3": "failed",
    }
    assert ran["counts"] == {
        "pending": 0,
        "cloned": 0,
        "updated": 1,
        "conflicts": 1,
        "up-to-date": 0,
        "failed": 2,
        **dict.fromkeys(("pushed", "pr-open", "merged", "closed"), 0),
    }

    updated = rows["p1"]
    mirror = mirror_of(world, updated)
    assert git(mirror, "rev-parse", BRANCH).strip() == updated["commit"]
    assert git(mirror, "rev-parse", f"{BRANCH}~1").strip() == updated["start_commit"]
    assert updated["start_commit"] == git(p1, "rev-parse", "main").strip()
    message = git(mirror, "log", "-1", "--format=%B", BRANCH)
    assert f"{TRAILER}: 1.0.0 -> 1.1.0" in message
    assert "- add: 1" in message and "- update: 2" in message
    assert show(mirror, BRANCH, "n.txt") == "new\n" and show(mirror, BRANCH, "a.txt") == "a2\n"
    assert updated["buckets"] == {"add": 1, "update": 2}
    assert git(p1, "for-each-ref") == remote_refs  # nothing is pushed

    held = rows["p2"]
    assert held["conflicts"] == ["c.txt"] and held["commit"] == ""
    held_mirror = mirror_of(world, held)
    assert git(held_mirror, "rev-parse", BRANCH).strip() == held["start_commit"]

    assert rows["gone"]["reason"].startswith(f"cannot fetch {world.entries['gone']['url']}")
    assert (
        rows["p3"]["reason"] == "acme-kit is not installed here (this repository follows other-kit)"
    )
    for failed in (rows["gone"], rows["p3"]):
        assert "\n" not in failed["reason"]

    code, status = world.status()
    assert code == 0 and status == {k: v for k, v in ran.items() if k != "run"}


def test_on_conflict_commit_commits_the_markers(world: World) -> None:
    world.remote("p2", edit="x\nmine\nz\n")
    assert world.start("--on-conflict", "commit")[0] == 0
    code, ran = world.run()
    assert code == Exit.CONFLICTS
    [record] = ran["repositories"]
    assert record["status"] == "conflicts" and record["commit"]
    mirror = mirror_of(world, record)
    merged = show(mirror, record["commit"], "c.txt")
    assert "<<<<<<<" in merged and "mine" in merged and "Y" in merged
    message = git(mirror, "log", "-1", "--format=%B", record["commit"])
    assert "Conflict markers left in:\n- c.txt" in message
    assert f"{TRAILER}: 1.0.0 -> 1.1.0" in message


@pytest.mark.parametrize(("auto", "kept"), [("keep-mine", "mine"), ("take-theirs", "Y")])
def test_the_campaigns_auto_policy_settles_every_update(world: World, auto: str, kept: str) -> None:
    """``start --auto`` is every update's ``--auto``: the conflict is settled, the repository
    is committed as updated, and the settings say so."""
    world.remote("p2", edit="x\nmine\nz\n")
    code, started = world.start("--auto", auto)
    assert code == 0 and started["auto"] == auto and started["conflict"] is None
    code, ran = world.run()
    assert code == Exit.OK
    [record] = ran["repositories"]
    assert record["status"] == "updated" and record["conflicts"] == [] and record["commit"]
    merged = show(mirror_of(world, record), record["commit"], "c.txt")
    assert kept in merged and "<<<<<<<" not in merged


def test_the_campaigns_conflict_style_reaches_every_update(world: World) -> None:
    """``start --conflict patch``: the update leaves the file as it was and a patch beside it
    (what ``tether update --conflict patch`` does), so the held conflict has no markers."""
    world.remote("p2", edit="x\nmine\nz\n")
    code, started = world.start("--conflict", "patch", "--on-conflict", "commit")
    assert code == 0 and started["conflict"] == "patch"
    code, ran = world.run()
    assert code == Exit.CONFLICTS
    [record] = ran["repositories"]
    assert record["status"] == "conflicts" and record["commit"]
    merged = show(mirror_of(world, record), record["commit"], "c.txt")
    assert "<<<<<<<" not in merged and "mine" in merged


def test_a_repository_already_at_the_version_is_up_to_date_without_a_commit(
    world: World,
) -> None:
    world.remote("p1")
    assert world.start(to="1.0.0")[0] == 0
    code, ran = world.run()
    [record] = ran["repositories"]
    assert code == 0 and record["status"] == "up-to-date" and record["commit"] == ""


def test_a_local_entry_is_mirrored_and_its_checkout_never_touched(world: World) -> None:
    local = world.repo("mine")
    world.add("mine", {"path": str(local)})
    before = tree_digest(local)
    code, _ = world.start()
    assert code == 0
    code, ran = world.run()
    [record] = ran["repositories"]
    assert code == 0 and record["status"] == "updated"
    assert record["url"] == str(local)
    assert tree_digest(local) == before  # no branch, no worktree, no file, no ref
    work = CampaignFolder(world.campaigns / "c1").worktree_path("mine")
    assert git(work, "branch", "--show-current").strip() == BRANCH
    assert (work / "n.txt").read_text() == "new\n"


def test_the_default_branch_is_the_remotes_head_unless_the_registry_names_one(
    world: World,
) -> None:
    world.remote("trunk", branch="trunk")
    world.remote("named")
    world.entries["named"]["default_branch"] = "release"
    world.add("named", world.entries["named"])
    assert world.start()[0] == 0
    _, ran = world.run()
    rows = by_name(ran)
    assert rows["trunk"]["status"] == "updated" and rows["trunk"]["default_branch"] == "trunk"
    assert rows["named"]["status"] == "failed"
    assert rows["named"]["reason"].endswith("has no branch release")


def test_the_upstream_may_be_named_by_the_source_it_was_installed_from(world: World) -> None:
    world.remote("p1")
    code, _ = cli("start", "c1", "--upstream", str(world.shelf), "--to", "1.1.0", *world.where())
    assert code == 0
    code, ran = world.run()
    [record] = ran["repositories"]
    assert code == 0 and record["status"] == "updated"
    assert ran["branch"].startswith("tether/update-") and ran["branch"].endswith("-1.1.0")
    assert git(mirror_of(world, record), "rev-parse", ran["branch"]).strip() == record["commit"]


# --- idempotent units, one writer ----------------------------------------------------------


def files_of(mirror: Path, commit: str) -> dict[str, str]:
    """Each file's blob in ``commit``; tether's state file carries the update's time."""
    listing = git(mirror, "ls-tree", "-r", commit).splitlines()
    rows = (line.split(None, 3) for line in listing)
    return {path: blob for _mode, _kind, blob, path in rows if path != ".tether/state.json"}


def test_the_update_unit_run_twice_gives_one_commit_on_the_start_commit(world: World) -> None:
    world.remote("p1")
    _, started = world.start()
    folder = CampaignFolder(Path(started["campaign_dir"]))
    settings, [record] = folder.load()
    cloned = fetch_unit(record, settings).record
    assert cloned.status == CLONED
    first = update_unit(cloned, settings)
    again = update_unit(cloned, settings)
    assert first.bundle == again.bundle == b""  # it worked in the campaign folder
    first, again = first.record, again.record
    mirror = folder.mirror_path(record.url)
    assert first.status == again.status == "updated"
    assert "n.txt" in files_of(mirror, first.commit)
    assert files_of(mirror, first.commit) == files_of(mirror, again.commit)
    assert git(mirror, "rev-list", "--count", f"{cloned.start_commit}..{BRANCH}").strip() == "1"
    # The units only return records; the one on disk is still the pending one.
    assert folder.load()[1] == [record]


def test_a_second_coordinator_is_refused_while_one_runs(world: World) -> None:
    world.remote("p1")
    _, started = world.start()
    with ProjectLock(CampaignFolder(Path(started["campaign_dir"])).lock_path, "campaign run c1"):
        done = run_tether("campaign", "run", "c1", "--dir", str(world.campaigns))
    assert done.returncode == Exit.ERROR and done.stderr.startswith("tether: ")
    assert world.status()[1]["counts"]["pending"] == 1


# --- killed and run again ------------------------------------------------------------------


def coordinator_forked(world: World, crash: str | None = None) -> subprocess.CompletedProcess[str]:
    """The coordinator in its own (forked) process, working in that process (-j 1): the crash
    point then stops the coordinator itself (tests/campaign/test_campaign_exec.py kills pool
    workers)."""
    argv = ["campaign", "run", "c1", "--dir", str(world.campaigns), "-j", "1", "--json"]
    return run_forked(*argv, crash=crash, timeout=300)


def outcome(document: dict) -> list[tuple[str, str, str]]:
    """What a run decided per repository, without times: state, buckets, conflicts."""
    return [
        (r["name"], r["status"], json.dumps([r["buckets"], r["conflicts"], r["start_commit"]]))
        for r in document["repositories"]
    ]


def three_repositories(world: World) -> None:
    world.remote("p1")
    world.remote("p2", edit="x\nmine\nz\n")
    world.remote("p3")
    assert world.start()[0] == 0


# Each repository's record is written twice (cloned, then finished): 6 writes in all.
@pytest.mark.parametrize("crash_after", [1, 2, 3, 5])
def test_a_coordinator_killed_after_any_record_continues_without_redoing_finished_ones(
    world: World, crash_after: int
) -> None:
    three_repositories(world)
    folder = world.campaigns / "c1"
    killed = coordinator_forked(world, f"{RECORD_STEP}:{crash_after}")
    assert killed.returncode == crashpoint.EXIT_CODE, killed.stderr
    finished_before = {
        path.name: path.read_bytes()
        for path in (folder / "repos").iterdir()
        if RepoRecord.from_json(json.loads(path.read_text())).finished
    }
    assert len(finished_before) == crash_after // 2

    rerun = coordinator_forked(world)
    assert rerun.returncode == Exit.CONFLICTS, rerun.stderr
    document = json.loads(rerun.stdout)
    assert [r["status"] for r in document["repositories"]] == ["updated", "conflicts", "updated"]
    for name, data in finished_before.items():  # not redone: the very same bytes
        assert (folder / "repos" / name).read_bytes() == data
    for record in document["repositories"]:
        if record["commit"]:
            mirror = mirror_of(world, record)
            count = git(mirror, "rev-list", "--count", f"{record['start_commit']}..{BRANCH}")
            assert count.strip() == "1"


def test_a_coordinator_killed_inside_an_update_redoes_that_update_from_its_start(
    world: World,
) -> None:
    three_repositories(world)
    clean = coordinator_forked(world)
    expected = outcome(json.loads(clean.stdout))

    other = replace(world, tmp=world.tmp / "again", campaigns=world.tmp / "again-c", entries={})
    other.tmp.mkdir()
    assert other.start()[0] == 0
    # Dies after the first file the first repository's update writes (its own journal).
    killed = coordinator_forked(other, "file-written:1")
    assert killed.returncode == crashpoint.EXIT_CODE, killed.stderr
    assert other.status()[1]["counts"]["cloned"] == 1
    rerun = coordinator_forked(other)
    assert rerun.returncode == Exit.CONFLICTS, rerun.stderr
    assert outcome(json.loads(rerun.stdout)) == expected


# --- bad input -----------------------------------------------------------------------------


def test_start_refuses_bad_input_and_writes_nothing(world: World) -> None:
    world.remote("p1")
    for args, words, exit_code in (
        (("--projects", "p1,nope"), "not in the registry", Exit.ERROR),
        (("--to", ""), "must not be empty", Exit.USAGE),
    ):
        done = run_tether(
            "campaign",
            "start",
            "c1",
            "--upstream",
            "acme-kit",
            "--to",
            "1.1.0",
            *world.where(),
            *args,
        )
        assert done.returncode == exit_code and words in done.stderr, done
        assert not world.campaigns.exists()
    done = run_tether(
        "campaign", "start", "../x", "--upstream", "acme-kit", "--to", "1.1.0", *world.where()
    )
    assert done.returncode == Exit.ERROR and "not usable as a folder name" in done.stderr
    assert world.start()[0] == 0
    before = tree_digest(world.campaigns)
    done = run_tether(
        "campaign", "start", "c1", "--upstream", "acme-kit", "--to", "1.1.0", *world.where()
    )
    assert done.returncode == Exit.ERROR and "already exists" in done.stderr
    assert tree_digest(world.campaigns) == before


def test_status_of_an_unknown_campaign_is_a_one_line_error(world: World) -> None:
    done = run_tether("campaign", "status", "nope", "--dir", str(world.campaigns))
    assert done.returncode == Exit.ERROR
    assert done.stderr.count("\n") == 1 and "no campaign at" in done.stderr


def test_only_the_named_projects_join_and_the_default_folder_is_the_state_folder(
    world: World,
) -> None:
    world.remote("p1")
    world.remote("p2")
    code, started = cli(
        "start",
        "c1",
        "--upstream",
        "acme-kit",
        "--to",
        "1.1.0",
        "--registry",
        str(world.registry),
        "--projects",
        "p2",
    )
    assert code == 0 and [r["name"] for r in started["repositories"]] == ["p2"]
    assert Path(started["campaign_dir"]) == world.tmp / "state" / "tether" / "campaigns" / "c1"
    assert cli("status", "c1")[1] == started


# --- the registry's remote entries ---------------------------------------------------------


def test_remote_entries_are_read_and_other_commands_count_them_missing(world: World) -> None:
    local = world.repo("here")
    world.add("here", {"path": str(local)})
    world.add("far", {"url": "https://example.invalid/far.git", "default_branch": "dev"})
    from tether.runs.registry import load_registry

    registry = load_registry(world.registry)
    far = registry.projects["far"]
    assert (far.url, far.default_branch, far.path) == ("https://example.invalid/far.git", "dev", "")
    assert registry.projects["here"].url == ""
    done = run_tether("fleet", "status", "--registry", str(world.registry), "--json")
    document = json.loads(done.stdout)
    assert [p["name"] for p in document["projects"]] == ["here"]
    assert [p["name"] for p in document["skipped_path_missing"]] == ["far"]


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({}, "has no path"),
        ({"url": ""}, "has no path"),
        ({"url": 3}, "url is not a string"),
        ({"url": "file:///x", "default_branch": 1}, "default_branch is not a string"),
        ({"url": "file:///x\u0000"}, "url contains a NUL byte"),
    ],
)
def test_a_malformed_remote_entry_names_the_file_and_the_problem(
    world: World, entry: dict, words: str
) -> None:
    world.add("bad", entry)
    done = run_tether(
        "campaign", "start", "c1", "--upstream", "acme-kit", "--to", "1.1.0", *world.where()
    )
    assert done.returncode == Exit.ERROR
    assert str(world.registry) in done.stderr and words in done.stderr
    assert not world.campaigns.exists()


def test_settings_and_records_survive_a_round_trip_through_json() -> None:
    settings = Settings("c", "kit", "2.0", "hold", "/f", "/r.json", "t")
    record = RepoRecord(
        "r",
        "file:///r.git",
        "main",
        "conflicts",
        "",
        "abc",
        "def",
        "1",
        "2",
        {"add": 1},
        ("c.txt",),
        "t",
    )
    assert Settings.from_json(json.loads(json.dumps(settings.to_json()))) == settings
    assert RepoRecord.from_json(json.loads(json.dumps(record.to_json()))) == record


def test_a_relative_campaign_folder_is_recorded_absolute(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A campaign started with ``--dir`` relative to one folder runs from any other: the
    settings name the folder itself, not a path relative to where start ran."""
    world.remote("p1")
    monkeypatch.chdir(world.campaigns.parent)
    relative = world.campaigns.name
    code, started = cli(
        "start", "c1", "--upstream", "acme-kit", "--to", "1.1.0",
        "--registry", str(world.registry), "--dir", relative,
    )  # fmt: skip
    assert code == 0
    assert started["campaign_dir"] == str(world.campaigns / "c1")
    monkeypatch.chdir(world.registry.parent.parent)
    code, ran = world.run()
    assert code == 0 and [r["status"] for r in ran["repositories"]] == ["updated"]


def test_a_worktree_left_locked_by_a_killed_add_is_made_again(world: World) -> None:
    """A unit killed inside ``git worktree add`` leaves the registration locked and the
    folder half made; the rerun's unit forgets it and makes the worktree again (``git
    worktree lock`` stands in for the kill's leftover: the same lock file)."""
    world.remote("p1")
    assert world.start()[0] == 0
    code, ran = world.run()
    assert code == Exit.OK
    [record] = ran["repositories"]
    folder = CampaignFolder(Path(ran["campaign_dir"]))
    mirror, work = folder.mirror_path(record["url"]), folder.worktree_path("p1")
    git(mirror, "worktree", "lock", str(work))
    shutil.rmtree(work)
    settings, [stored] = folder.load()
    done = update_unit(RepoRecord.from_json({**stored.to_json(), "status": CLONED}), settings)
    assert done.record.status == "updated", done.record.reason
    assert git(work, "rev-parse", "HEAD").strip() == done.record.commit
