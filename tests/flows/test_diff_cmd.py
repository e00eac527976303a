"""``tether diff``: the adopter's changes to shipped files against the installed release.

Projects are real installs from a release shelf; where the text must be git's, the same
edits are made in a real git repository holding the release and ``git diff`` is the oracle.
"""

import hashlib
import json
import os
import pty
import shutil
import sys
from functools import partial
from pathlib import Path

import pytest

from builders import (
    ForkedChild,
    call,
    environment_as,
    git,
    make_release,
    run_forked,
    run_tether,
    write_files,
)
from tether.cli.main import main as tether_main

GUIDE = "".join(f"line {n}\n" for n in range(1, 13))
START, END = "<!-- kit:remit:start -->", "<!-- kit:remit:end -->"
AGENT = f"# Reviewer\n\nRead the diff.\n{START}\n- src/**\n{END}\nBe brief.\n"
PACKAGE = (
    '{\n  "name": "kit",\n  "version": "1.0.0",\n  "dependencies": {\n'
    '    "react": "^18.0.0",\n    "zod": "^3.0.0"\n  },\n'
    '  "scripts": {\n    "test": "vitest"\n  }\n}\n'
)
FILES = {
    "docs/guide.md": GUIDE,
    "cfg/app.yml": "a: 1\nb: 2\n",
    "bin/lint.sh": "#!/bin/sh\necho lint\n",
    "img/logo.bin": b"\x00\x01\x02",
    "agents/reviewer.md": AGENT,
    "package.json": PACKAGE,
}
REGIONS = [{"id": "remit", "startMarker": START, "endMarker": END, "paths": ["agents/reviewer.md"]}]
MERGE = {"package.json": {"preset": "npm-package"}}


@pytest.fixture
def shelf(tmp_path):
    shelf = tmp_path / "releases"
    make_release(
        shelf,
        "1.0.0",
        FILES,
        {"bin/lint.sh": "owned"},
        sentinels={"CHANGELOG.md": "# log\n"},
        extra={"regions": REGIONS, "merge": MERGE},
    )
    os.chmod(shelf / "1.0.0" / "bin/lint.sh", 0o755)
    return shelf


@pytest.fixture
def project(tmp_path, shelf):
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    return project


def tether_diff(project, *args):
    result = run_tether("diff", "-C", str(project), *args)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def diff_bytes(project, *args):
    """stdout as the bytes written (a patch's CRLF lines stay CRLF lines)."""
    result = run_forked("diff", "-C", str(project), *args)
    assert result.returncode == 0, result.stderr
    return result.stdout.encode("utf-8", "surrogateescape")


def diff_json(project, *args):
    result = tether_diff(project, "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def git_diff(tmp_path, shelf, project, *paths):
    """``git diff`` of the same edits: the release committed, the project's files on top."""
    repo = tmp_path / "oracle"
    shutil.copytree(shelf / "1.0.0", repo, ignore=shutil.ignore_patterns(".tether"))
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "release")
    for rel in FILES:
        if (project / rel).exists():
            shutil.copy2(project / rel, repo / rel)
        else:
            (repo / rel).unlink()
    return git(
        repo,
        "-c",
        "core.autocrlf=false",
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-indent-heuristic",
        "--diff-algorithm=myers",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        *paths,
    )


EDITED_GUIDE = GUIDE.replace("line 2\n", "line two\n").replace("line 11\n", "line 11\nnew line\n")


def edit_guide(project):
    (project / "docs/guide.md").write_text(EDITED_GUIDE)


def blob_id(text: str | bytes) -> str:
    """git's own short id for these bytes, as its index line shows them."""
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()[:7]


GUIDE_PATCH = f"""\
diff --git a/docs/guide.md b/docs/guide.md
index {blob_id(GUIDE)}..{blob_id(EDITED_GUIDE)} 100644
--- a/docs/guide.md
+++ b/docs/guide.md
@@ -1,5 +1,5 @@
 line 1
-line 2
+line two
 line 3
 line 4
 line 5
@@ -9,4 +9,5 @@ line 8
 line 9
 line 10
 line 11
+new line
 line 12
"""


def test_clean_project_prints_nothing_and_exits_0(project):
    result = tether_diff(project)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    doc = diff_json(project)
    assert doc["files"] == [] and doc["totals"] == {"files": 0, "added": 0, "removed": 0}
    assert tether_diff(project, "--exit-code").returncode == 0


def test_modified_file_exact_unified_diff(project):
    edit_guide(project)
    result = tether_diff(project)
    assert result.returncode == 0
    assert result.stdout == GUIDE_PATCH
    assert tether_diff(project, "--exit-code").returncode == 3


def test_diff_is_byte_for_byte_git_diff(tmp_path, shelf, project):
    edit_guide(project)
    (project / "cfg/app.yml").unlink()
    (project / "bin/lint.sh").write_text("#!/bin/sh\necho lint --strict")  # no final newline
    (project / "img/logo.bin").write_bytes(b"\x00\x01\x02\x03")
    ours = tether_diff(project, "--no-regions").stdout
    assert ours == git_diff(tmp_path, shelf, project, "bin", "cfg", "docs", "img")
    assert "deleted file mode 100644" in ours and "\\ No newline at end of file" in ours


def test_patch_applies_with_git_apply(tmp_path, shelf, project):
    edit_guide(project)
    (project / "cfg/app.yml").unlink()
    patch = tmp_path / "local.patch"
    patch.write_bytes(diff_bytes(project, "docs", "cfg"))
    pristine = tmp_path / "fresh"
    shutil.copytree(shelf / "1.0.0", pristine)
    git(pristine, "apply", str(patch))
    assert (pristine / "docs/guide.md").read_bytes() == (project / "docs/guide.md").read_bytes()
    assert not (pristine / "cfg/app.yml").exists()


def test_deleted_file_is_a_whole_file_removal(project):
    (project / "cfg/app.yml").unlink()
    result = tether_diff(project)
    assert result.stdout == (
        "diff --git a/cfg/app.yml b/cfg/app.yml\n"
        "deleted file mode 100644\n"
        f"index {blob_id(FILES['cfg/app.yml'])}..0000000\n"
        "--- a/cfg/app.yml\n"
        "+++ /dev/null\n"
        "@@ -1,2 +0,0 @@\n"
        "-a: 1\n"
        "-b: 2\n"
    )
    [entry] = diff_json(project)["files"]
    assert (entry["status"], entry["added"], entry["removed"]) == ("deleted", 0, 2)


def test_stat_lines_and_total(project):
    edit_guide(project)
    (project / "cfg/app.yml").unlink()
    (project / "img/logo.bin").write_bytes(b"\x00\x01\x02\x03")
    result = tether_diff(project, "--stat")
    assert result.stdout == (
        " cfg/app.yml   |   2 --\n"
        " docs/guide.md |   3 ++-\n"
        " img/logo.bin  | Bin 3 -> 4 bytes\n"
        " 3 files changed, 2 insertions(+), 3 deletions(-)\n"
    )


def test_stat_graph_is_scaled_to_80_columns(tmp_path, shelf, project):
    (project / "docs/guide.md").write_text("".join(f"new {n}\n" for n in range(200)))
    ours = tether_diff(project, "--stat").stdout
    assert ours == git_diff(tmp_path, shelf, project, "--stat=80", "docs")
    assert max(len(line) for line in ours.splitlines()) <= 80


def test_json_counts_and_text(project):
    edit_guide(project)
    (project / "img/logo.bin").write_bytes(b"\x00\x01\x02\x03")
    doc = diff_json(project)
    by_path = {f["path"]: f for f in doc["files"]}
    guide = by_path["docs/guide.md"]
    assert (guide["status"], guide["added"], guide["removed"]) == ("modified", 2, 1)
    assert guide["region_masked"] is False and guide["owned"] is False
    assert guide["diff"] == GUIDE_PATCH
    logo = by_path["img/logo.bin"]
    assert (logo["binary"], logo["added"], logo["removed"]) == (True, None, None)
    assert (logo["old_bytes"], logo["new_bytes"]) == (3, 4)
    assert "Binary files a/img/logo.bin and b/img/logo.bin differ" in logo["diff"]
    assert doc["totals"] == {"files": 2, "added": 2, "removed": 1}
    assert doc["installed_version"] == "1.0.0" and doc["upstream"] == "acme-kit"
    stat_doc = diff_json(project, "--stat")
    assert all("diff" not in f for f in stat_doc["files"])
    assert stat_doc["totals"] == doc["totals"]


def test_owned_file_is_marked(project):
    mine = "#!/bin/sh\nexit 0\n"
    (project / "bin/lint.sh").write_text(mine)
    [entry] = diff_json(project)["files"]
    assert entry["path"] == "bin/lint.sh" and entry["owned"] is True
    ids = f"{blob_id(FILES['bin/lint.sh'])}..{blob_id(mine)}"
    assert f"index {ids} 100755" in entry["diff"]


def test_paths_limit_the_diff_to_files_and_folders(project):
    edit_guide(project)
    (project / "cfg/app.yml").unlink()
    (project / "bin/lint.sh").write_text("#!/bin/sh\nexit 0\n")
    assert [f["path"] for f in diff_json(project, "docs")["files"]] == ["docs/guide.md"]
    assert [f["path"] for f in diff_json(project, "./cfg/app.yml", "bin/")["files"]] == [
        "bin/lint.sh",
        "cfg/app.yml",
    ]
    absolute = str(project / "docs" / "guide.md")
    assert [f["path"] for f in diff_json(project, absolute)["files"]] == ["docs/guide.md"]
    assert diff_json(project, "docs")["paths"] == ["docs"]
    assert tether_diff(project, "docs").stdout == GUIDE_PATCH


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        ("nope.md", "nope.md: no file of acme-kit 1.0.0 is at or under this path"),
        ("doc", "doc: no file of acme-kit 1.0.0 is at or under this path"),
        ("CHANGELOG.md", "CHANGELOG.md: a sentinel file, the project's own; it has no diff"),
        ("../elsewhere", "../elsewhere: outside the project"),
    ],
)
def test_path_that_is_not_shipped_is_a_usage_error(project, arg, message):
    edit_guide(project)
    result = tether_diff(project, arg)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"tether: {message}")
    assert len(result.stderr.strip().splitlines()) == 1


def test_diff_agrees_with_status(project):
    edit_guide(project)
    (project / "cfg/app.yml").unlink()
    (project / "bin/lint.sh").write_bytes(b"#!/bin/sh\r\necho lint\r\n")  # a CRLF checkout
    status = json.loads(run_tether("status", "--json", "-C", str(project)).stdout)
    doc = diff_json(project)
    assert sorted(status["modified"] + status["deleted"]) == [f["path"] for f in doc["files"]]
    assert "bin/lint.sh" not in [f["path"] for f in doc["files"]]


def test_crlf_checkout_is_diffed_in_its_own_line_endings(tmp_path, shelf, project):
    (project / "cfg/app.yml").write_bytes(b"a: 1\r\nb: 3\r\n")
    [entry] = diff_json(project)["files"]
    assert (entry["added"], entry["removed"]) == (1, 1)
    assert entry["diff"].endswith("@@ -1,2 +1,2 @@\n a: 1\r\n-b: 2\r\n+b: 3\r\n")
    patch = tmp_path / "crlf.patch"
    patch.write_bytes(diff_bytes(project, "cfg"))
    checkout = tmp_path / "checkout"
    write_files(checkout, {"cfg/app.yml": b"a: 1\r\nb: 2\r\n"})
    git(checkout, "apply", str(patch))  # applies to the file as it sits on disk
    assert (checkout / "cfg/app.yml").read_bytes() == b"a: 1\r\nb: 3\r\n"


def test_region_only_change_gives_no_diff_and_says_so(project):
    agent = project / "agents/reviewer.md"
    agent.write_text(agent.read_text().replace("- src/**\n", "- src/**\n- lib/**\n"))
    result = tether_diff(project)
    assert result.returncode == 0
    assert result.stdout == (
        "# agents/reviewer.md: differs only inside its generated region 'remit'; not shown\n"
    )
    doc = diff_json(project)
    assert doc["files"] == []
    assert doc["region_only"] == [{"path": "agents/reviewer.md", "region": "remit"}]
    assert tether_diff(project, "--exit-code").returncode == 0
    whole = diff_json(project, "--no-regions")
    assert [f["path"] for f in whole["files"]] == ["agents/reviewer.md"]
    assert whole["files"][0]["region_masked"] is False


def test_change_outside_region_is_shown_with_the_body_masked(project):
    agent = project / "agents/reviewer.md"
    text = agent.read_text().replace("- src/**\n", "- lib/**\n")
    agent.write_text(text.replace("Read the diff.\n", "Read the whole diff.\n"))
    result = tether_diff(project)
    notes, patch = result.stdout.split("diff --git", 1)
    assert notes == "# agents/reviewer.md: generated region 'remit' masked on both sides\n"
    assert patch.split("\n", 2)[2] == (
        "--- a/agents/reviewer.md\n"
        "+++ b/agents/reviewer.md\n"
        "@@ -1,6 +1,6 @@\n"
        " # Reviewer\n"
        " \n"
        "-Read the diff.\n"
        "+Read the whole diff.\n"
        f" {START}\n"
        " <<tether: generated region body masked>>\n"
        f" {END}\n"
    )
    [entry] = diff_json(project)["files"]
    assert (entry["region_masked"], entry["region"]) == (True, "remit")
    assert (entry["added"], entry["removed"]) == (1, 1)


def test_malformed_region_markers_fall_back_to_the_whole_file(project):
    agent = project / "agents/reviewer.md"
    agent.write_text(agent.read_text().replace(END + "\n", ""))
    [entry] = diff_json(project)["files"]
    assert entry["region_masked"] is False
    assert entry["region_fallback"] == "malformed-markers"
    assert "-" + END in entry["diff"]
    assert "region markers are malformed; compared whole" in tether_diff(project).stdout


def test_structured_file_lists_changed_managed_keys(project):
    text = (
        PACKAGE.replace('"name": "kit"', '"name": "our-app"')
        .replace('"^18.0.0"', '"^18.2.0"')
        .replace('    "zod": "^3.0.0"\n', '    "zod": "^3.0.0",\n    "lodash": "^4.0.0"\n')
        .replace('    "test": "vitest"\n', "")
        .replace('"scripts": {\n  }', '"scripts": {}')
    )
    (project / "package.json").write_text(text)
    [entry] = diff_json(project)["files"]
    assert entry["managed_changes"] == [
        {
            "change": "added",
            "kind": "entry",
            "section": "dependencies",
            "key": "lodash",
            "current": "^4.0.0",
        },
        {
            "change": "changed",
            "kind": "entry",
            "section": "dependencies",
            "key": "react",
            "baseline": "^18.0.0",
            "current": "^18.2.0",
        },
        {
            "change": "removed",
            "kind": "entry",
            "section": "scripts",
            "key": "test",
            "baseline": "vitest",
        },
    ]
    assert entry["managed_error"] is None
    assert '-  "name": "kit",' in entry["diff"] and '+  "name": "our-app",' in entry["diff"]
    human = tether_diff(project).stdout
    assert human.startswith(
        "# package.json: managed keys changed: dependencies.lodash (added), "
        "dependencies.react, scripts.test (removed)\ndiff --git a/package.json b/package.json\n"
    )


def test_structured_file_with_only_unmanaged_changes_lists_none(project):
    (project / "package.json").write_text(PACKAGE.replace('"kit"', '"our-app"'))
    [entry] = diff_json(project)["files"]
    assert entry["managed_changes"] == [] and entry["managed_error"] is None
    assert "# package.json" not in tether_diff(project).stdout


def test_structured_file_that_no_longer_parses_still_gets_its_text_diff(project):
    (project / "package.json").write_text(PACKAGE.replace('"name"', "name"))
    [entry] = diff_json(project)["files"]
    assert entry["managed_changes"] is None
    assert entry["managed_error"].startswith("current file does not parse: invalid JSON")
    assert (entry["added"], entry["removed"]) == (1, 1)


def test_missing_pristine_cache_is_fetched_again(project):
    edit_guide(project)
    (project / "cfg/app.yml").unlink()
    before = tether_diff(project).stdout
    shutil.rmtree(project / ".tether" / "cache")  # a fresh clone: the cache is git-ignored
    result = tether_diff(project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == before
    assert GUIDE_PATCH in result.stdout


def test_not_a_tether_project_is_one_line_exit_1(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    result = run_tether("diff", "-C", str(plain))
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"tether: {plain}: no tether install found (no .tether/state.json); "
        "run 'tether init' first\n"
    )
    missing = run_tether("diff", "-C", str(tmp_path / "nope"), "--json")
    assert missing.returncode == 1
    assert missing.stderr == f"tether: {tmp_path / 'nope'}: no such directory\n"
    assert json.loads(missing.stdout)["error"] == {
        "message": f"{tmp_path / 'nope'}: no such directory",
        "kind": "error",
        "exit_code": 1,
    }


def test_path_replaced_by_a_folder_shows_as_removed(project):
    (project / "cfg/app.yml").unlink()
    (project / "cfg/app.yml").mkdir()
    [entry] = diff_json(project)["files"]
    assert (entry["status"], entry["note"]) == ("modified", "no longer a regular file")
    assert (entry["added"], entry["removed"]) == (0, 2)
    assert tether_diff(project).stdout.startswith(
        "# cfg/app.yml: no longer a regular file\ndiff --git a/cfg/app.yml b/cfg/app.yml\n"
    )


def run_in_terminal(args, env):
    """tether in a child forked with ``env`` as its environment and its stdout on a
    pseudo-terminal; what it wrote there."""
    leader, follower = pty.openpty()
    work = partial(tether_main, list(args))
    child = ForkedChild(work, env=environment_as(env), stdout_fd=follower)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closes with the process (EIO on Linux)
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    done = child.wait(timeout=60)
    assert done.returncode == 0, done.stderr
    return b"".join(chunks).decode()


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_colour_only_on_a_terminal_without_no_color(project):
    edit_guide(project)
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["TERM"] = "xterm"
    coloured = run_in_terminal(["diff", "-C", str(project)], env)
    assert "\x1b[31m-line 2\x1b[m" in coloured and "\x1b[32m+line two\x1b[m" in coloured
    assert "\x1b[36m@@ -9,4 +9,5 @@\x1b[m line 8" in coloured
    for args, changed in (
        ([], {"NO_COLOR": "1"}),
        ([], {"TERM": "dumb"}),
        (["--no-color"], {}),
        (["--no-color"], {"NO_COLOR": ""}),  # the flag wins over an empty NO_COLOR
    ):
        plain = run_in_terminal(["diff", *args, "-C", str(project)], {**env, **changed})
        assert "\x1b[" not in plain and "-line 2" in plain, (args, changed)
    assert "\x1b[" not in tether_diff(project).stdout  # a pipe never gets colour


def test_positional_argument_is_a_path_not_the_project(tmp_path, project):
    edit_guide(project)
    # PATHs are positional, so the project folder comes with -C (default: the current one).
    result = run_tether("diff", str(project), cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == (
        "tether: .: no tether install found (no .tether/state.json); run 'tether init' first\n"
    )


def test_non_utf8_text_keeps_its_bytes(tmp_path, shelf, project):
    (project / "cfg/app.yml").write_bytes(b"a: 1\nb: caf\xe9\n")
    output = diff_bytes(project)
    assert b"+b: caf\xe9\n" in output
    patch = tmp_path / "latin1.patch"
    patch.write_bytes(output)
    fresh = tmp_path / "fresh"
    shutil.copytree(shelf / "1.0.0", fresh)
    git(fresh, "apply", str(patch))
    assert (fresh / "cfg/app.yml").read_bytes() == b"a: 1\nb: caf\xe9\n"


def test_sentinels_and_unlisted_files_are_never_in_the_diff(project):
    (project / "CHANGELOG.md").write_text("# our log\n")
    (project / "notes.txt").write_text("ours\n")
    assert tether_diff(project).stdout == ""


def test_paths_are_relative_to_the_project_folder(project):
    edit_guide(project)
    here = Path(project)
    result = run_tether("diff", "docs/guide.md", cwd=here)
    assert result.returncode == 0 and result.stdout == GUIDE_PATCH


def test_gaia_profile_default_presets_apply(tmp_path):
    shelf = tmp_path / "gaia-rel"
    make_release(
        shelf, "2.0.0", {"package.json": PACKAGE, "wiki/index.md": "# i\n"}, profile="gaia"
    )
    project = tmp_path / "gaia"
    assert (
        call(
            "init", "--profile", "gaia", "--source", str(shelf), "--to", "2.0.0", "-C", str(project)
        )
        == 0
    )
    (project / "package.json").write_text(PACKAGE.replace('"^3.0.0"', '"^3.1.0"'))
    [entry] = diff_json(project)["files"]
    assert [(c["section"], c["key"]) for c in entry["managed_changes"]] == [("dependencies", "zod")]
    assert diff_json(project)["profile"] == "gaia"


def test_stat_shortens_a_long_path_as_git_does(tmp_path):
    long_path = "very/long/folder/name/that/goes/on/and/on/for/quite/a/while/deep/inside/file.txt"
    files = {long_path: "a\n" * 300, "x.txt": "x\n"}
    shelf = tmp_path / "long-rel"
    make_release(shelf, "1.0.0", files)
    project = tmp_path / "long"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    write_files(project, {long_path: "b\n" * 120 + "a\n" * 250, "x.txt": "x\ny\n"})
    repo = tmp_path / "long-oracle"
    write_files(repo, files)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "release")
    write_files(repo, {long_path: "b\n" * 120 + "a\n" * 250, "x.txt": "x\ny\n"})
    expected = git(repo, "diff", "--stat=80", "--no-indent-heuristic", "--diff-algorithm=myers")
    ours = tether_diff(project, "--stat").stdout
    assert ours == expected
    assert ours.startswith(" .../")


def test_managed_keys_not_compared_are_facts_on_the_file(tmp_path):
    """The flow records why a structured file's managed keys were not compared (the sides
    that do not parse, or the merge entry's problem) as a fact; report/diff words it."""
    from tether.flows.localdiff import ManagedNotCompared, local_diff
    from tether.model.plan import SideFault

    bad_release = {**FILES, "package.json": "[1]\n"}
    shelf = tmp_path / "releases"
    make_release(shelf, "1.0.0", bad_release, {}, extra={"merge": MERGE})
    project = tmp_path / "proj"
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    (project / "package.json").write_text("{\n")
    [entry] = local_diff(project).files
    assert entry.managed_changes is None and entry.not_compared is not None
    assert entry.not_compared.rule == ""
    roles = [(side.role, side.fault) for side in entry.not_compared.unread]
    assert roles == [("baseline", SideFault.NOT_PARSED), ("current", SideFault.NOT_PARSED)]
    baseline, current = entry.not_compared.unread
    assert baseline.message == "the top level is a list, not a mapping"
    assert current.message.startswith("invalid JSON")

    other = tmp_path / "other"
    make_release(other, "1.0.0", FILES, {}, extra={"merge": {"package.json": {"preset": "x"}}})
    project = tmp_path / "proj2"
    assert call("init", "--source", str(other), "--to", "1.0.0", "-C", str(project)) == 0
    (project / "package.json").write_text(PACKAGE.replace('"kit"', '"ours"'))
    [entry] = local_diff(project).files
    assert entry.managed_changes is None
    assert entry.not_compared == ManagedNotCompared(
        rule="merge entry for package.json: unknown preset 'x' "
        "(gaia-audit-ci, npm-package, pnpm-workspace, pyproject)"
    )


def test_managed_keys_not_compared_worded_by_report():
    """report/diff words the fact the same way in the text and the --json document."""
    from tether.flows.localdiff import DiffReport, FileDiff, ManagedNotCompared
    from tether.model.plan import SideFault, SideProblem
    from tether.report.diff import diff_document, managed_error, render_diff

    unread = ManagedNotCompared(
        unread=(
            SideProblem("baseline", SideFault.NOT_PARSED, "invalid JSON: bad (line 1, column 2)"),
            SideProblem("current", SideFault.NOT_PARSED, "the top level is a list, not a mapping"),
        )
    )
    words = (
        "baseline file does not parse: invalid JSON: bad (line 1, column 2); "
        "current file does not parse: the top level is a list, not a mapping"
    )
    assert managed_error(unread) == words
    assert managed_error(ManagedNotCompared(rule="merge entry for a.json: unknown preset 'x'")) == (
        "merge entry for a.json: unknown preset 'x'"
    )
    report = DiffReport("default", "up", "src", "1.0.0")
    report.files = [FileDiff("a.json", "modified", False, 1, 1, not_compared=unread)]
    assert render_diff(report) == f"# a.json: managed keys not compared: {words}\n"
    files = diff_document(report)["files"]
    assert isinstance(files, list)
    [doc] = files
    assert doc["managed_changes"] is None and doc["managed_error"] == words
