"""``campaign status --html FILE``: one self-contained page, checked as text and loaded in a
real headless browser (Debian's ``chromium``, installed by .ci/run).

The browser runs as a program: ``--dump-dom`` prints the document after its scripts ran, and
``--enable-logging=stderr`` prints every console message (an uncaught error, a refused
fetch) on stderr. A copy of the page with one more script clicks headers like a person, so
the sort order is read back from the DOM. Without chromium the browser tests are skipped
here and fail under .ci/run (TETHER_REQUIRE_BROWSER=1).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest

import tests.campaign.test_campaign as test_campaign
from builders import run_tether, tree_digest
from tests.campaign.conftest import Seeds
from tests.campaign.test_campaign import World, cli
from tether.errors import Exit
from tether.report.campaign import STATE_ORDER
from tether.report.campaign_html import render_status_page

# Real repositories served as file:// remotes, a registry and a campaigns folder.
world = test_campaign.world

HOSTILE = "<img src=x onerror=alert(1)>&\"q'"
NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def record(name: str, state: str, **fields: object) -> dict:
    base = {
        "name": name,
        "url": f"file:///remotes/{name}.git",
        "default_branch": "main",
        "status": state,
        "reason": "",
        "start_commit": "",
        "commit": "",
        "from_version": "",
        "to_version": "",
        "buckets": {},
        "conflicts": [],
        "updated_at": "",
    }
    return {**base, **fields}


def document(*records: dict) -> dict:
    counts = dict.fromkeys(STATE_ORDER, 0)
    for each in records:
        counts[each["status"]] = counts.get(each["status"], 0) + 1
    return {
        "campaign": "c1",
        "folder": "/campaigns/c1",
        "upstream": "acme-kit",
        "to_version": "1.1.0",
        "branch": "tether/update-acme-kit-1.1.0",
        "on_conflict": "hold",
        "registry": "/registry.json",
        "created_at": "2026-03-01T10:00:00.000Z",
        "counts": counts,
        "repositories": list(records),
    }


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text of each table row."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "tr":
            self.rows.append([])
        elif tag == "td":
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def parsed(html: str) -> Elements:
    elements = Elements()
    elements.feed(html)
    return elements


# --- the page as text ------------------------------------------------------------------------


def test_the_page_escapes_every_value_and_links_only_http_pull_requests() -> None:
    page = render_status_page(
        document(
            record(HOSTILE, "failed", reason="fatal: <script>alert(2)</script>"),
            record("ok", "conflicts", conflicts=["<em>x</em>.txt"], pr_url="javascript:alert(3)"),
            record("pr", "updated", pr_url="https://git.example.com/org/pr/pull/17"),
        ),
        NOW,
    )
    elements = parsed(page)
    assert [tag for tag, _ in elements.tags].count("script") == 1  # the page's own
    assert not [tag for tag, _ in elements.tags if tag in ("img", "em")]
    links = [attrs for tag, attrs in elements.tags if tag == "a"]
    assert links == [{"href": "https://git.example.com/org/pr/pull/17", "rel": "noreferrer"}]
    rows = {row[0]: row for row in elements.rows if row}
    assert rows[HOSTILE][1] == "failedfatal: <script>alert(2)</script>"  # shown as text
    assert rows["ok"][4] == "1<em>x</em>.txt" and rows["ok"][5] == ""
    assert rows["pr"][5] == "#17"
    repo_rows = [attrs for tag, attrs in elements.tags if tag == "tr" and "data-repo" in attrs]
    assert [attrs["data-repo"] for attrs in repo_rows] == [HOSTILE, "ok", "pr"]


def test_the_page_loads_nothing_from_anywhere() -> None:
    page = render_status_page(document(record("a", "updated")), NOW)
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy and "default-src 'none'" in policy[1]
    for attrs in (attrs for _, attrs in parsed(page).tags):
        assert "src" not in attrs and "href" not in attrs
    assert "<link" not in page and "@import" not in page and "url(" not in page


def test_counts_and_one_bar_per_state_in_proportion() -> None:
    records = [record(f"u{i}", "updated") for i in range(4)] + [record("f", "failed")]
    elements = parsed(render_status_page(document(*records), NOW))
    counted = [attrs["data-state"] for tag, attrs in elements.tags if tag == "li"]
    assert counted == list(STATE_ORDER)
    groups = [attrs["data-state"] for tag, attrs in elements.tags if tag == "g"]
    rects = [int(str(attrs["width"])) for tag, attrs in elements.tags if tag == "rect"]
    bars = dict(zip(groups, rects, strict=True))
    assert bars["updated"] == 4 * bars["failed"] > 0
    assert bars["pending"] == 0


def test_versions_buckets_and_age_per_repository() -> None:
    two_hours = (NOW - timedelta(hours=2, minutes=5)).isoformat().replace("+00:00", "Z")
    row = record(
        "a",
        "updated",
        from_version="1.0.0",
        to_version="1.1.0",
        buckets={"add": 1, "update": 2},
        updated_at=two_hours,
    )
    [cells] = [r for r in parsed(render_status_page(document(row), NOW)).rows if r]
    assert cells[2] == "1.0.0 → 1.1.0"
    assert cells[3] == "add 1 · update 2"
    assert cells[6] == "2h 05m"


# --- the command -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory, seeds: Seeds) -> World:
    """Five repositories, one of them named like markup, updated, held and failed: one run
    for the module, as the tests that show it only read the campaign (each writes its page in
    its own folder; test_status_html_writes_the_page_and_prints_the_status checks the
    campaign is left as it was)."""
    root = tmp_path_factory.mktemp("hostile-campaign")
    world = World(root, seeds.shelf, root / "registry.json", root / "campaigns", seeds)
    with pytest.MonkeyPatch.context() as patch:  # what the world fixture sets for a test
        patch.setenv("XDG_STATE_HOME", str(root / "state"))
        patch.setenv("XDG_CONFIG_HOME", str(root / "config"))
        world.remote("p1")
        world.remote("p2", edit="x\nmine\nz\n")
        world.remote(HOSTILE)
        world.add("gone", {"url": (world.tmp / "nowhere.git").as_uri()})
        world.remote("p3", shelf=world.seeds.other_shelf)  # follows other-kit
        assert world.start()[0] == 0
        assert cli("run", "c1", "--dir", str(world.campaigns), "-j", "1")[0] == Exit.ERROR
    return world


def test_status_html_writes_the_page_and_prints_the_status(hostile: World, tmp_path: Path) -> None:
    page = tmp_path / "out" / "status.html"
    records = tree_digest(hostile.campaigns)
    done = run_tether(
        "campaign", "status", "c1", "--dir", str(hostile.campaigns), "--html", str(page), "--json"
    )
    assert done.returncode == 0
    assert json.loads(done.stdout) == hostile.status()[1]  # one document, the status
    rows = [a for t, a in parsed(page.read_text()).tags if t == "tr" and "data-repo" in a]
    assert len(rows) == 5
    assert tree_digest(hostile.campaigns) == records  # the campaign is only read
    text = run_tether(
        "campaign", "status", "c1", "--dir", str(hostile.campaigns), "--html", str(page)
    )
    assert text.stdout.endswith(f"page: {page}\n")


def test_status_html_into_a_folder_is_a_one_line_error(world: World) -> None:
    world.remote("p1")
    assert world.start()[0] == 0
    done = run_tether(
        "campaign", "status", "c1", "--dir", str(world.campaigns), "--html", str(world.tmp)
    )
    assert done.returncode == Exit.ERROR
    assert done.stderr == f"tether: cannot write the page {world.tmp}: it is a folder\n"


# --- in a real browser -------------------------------------------------------------------------


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("TETHER_REQUIRE_BROWSER"):
            pytest.fail("chromium is required here (.ci/run installs it) and is missing")
        pytest.skip("chromium is not installed (apt-get install chromium; .ci/run does)")
    return found


def load(page: Path, profile: Path) -> tuple[str, list[str]]:
    """The DOM after the page's scripts ran, and the browser's console messages."""
    argv = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        "--dump-dom",
        page.as_uri(),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return done.stdout, console


def repositories_in(dom: str) -> list[str]:
    elements = parsed(dom)
    return [str(a["data-repo"]) for t, a in elements.tags if t == "tr" and "data-repo" in a]


def clicked_in_turn(page: Path, *headers: int) -> Path:
    """A copy of ``page`` whose last script clicks these column headers in turn, one browser
    load for them all; after each click it keeps the rows' order and the clicked header's
    ``aria-sort`` in a ``<pre id="after-N">`` (``data-order``, ``data-sort``)."""
    keep = (
        "function keep(n, index) {"
        " const out = document.createElement('pre'); out.id = 'after-' + n;"
        " const rows = [...document.querySelectorAll('tr[data-repo]')].map(r => r.dataset.repo);"
        " out.setAttribute('data-order', JSON.stringify(rows));"
        " const header = document.querySelectorAll('#repositories th')[index];"
        " out.setAttribute('data-sort', header.getAttribute('aria-sort') || '');"
        " document.body.appendChild(out); }"
    )
    clicks = "".join(
        f'document.querySelectorAll("#repositories th")[{index}].click(); keep({n}, {index});'
        for n, index in enumerate(headers)
    )
    copy = page.with_name("clicked.html")
    copy.write_text(page.read_text().replace("</body>", f"<script>{keep}{clicks}</script></body>"))
    return copy


def after_each_click(dom: str) -> list[tuple[list[str], str]]:
    """What ``clicked_in_turn`` kept: the rows' order and the header's sort, per click."""
    kept = {
        str(a["id"]): (json.loads(str(a["data-order"])), str(a["data-sort"]))
        for t, a in parsed(dom).tags
        if t == "pre" and str(a.get("id", "")).startswith("after-")
    }
    return [kept[f"after-{n}"] for n in range(len(kept))]


def test_the_page_in_a_browser_has_one_row_per_repository_and_no_console_errors(
    hostile: World, tmp_path: Path
) -> None:
    chromium()
    page = tmp_path / "out" / "status.html"
    args = ("campaign", "status", "c1", "--dir", str(hostile.campaigns), "--html", str(page))
    assert run_tether(*args).returncode == 0
    dom, console = load(page, tmp_path / "profile")
    assert console == []  # no uncaught error, no refused load, nothing logged
    assert repositories_in(dom) == ["p1", "p2", HOSTILE, "gone", "p3"]
    assert "<img" not in dom  # the hostile name stayed text
    assert "onerror=alert(1)" in dom  # ... and is shown, escaped


def test_clicking_a_header_sorts_the_table_and_clicking_again_reverses_it(
    hostile: World, tmp_path: Path
) -> None:
    chromium()
    page = tmp_path / "out" / "status.html"
    args = ("campaign", "status", "c1", "--dir", str(hostile.campaigns), "--html", str(page))
    assert run_tether(*args).returncode == 0
    names = ["p1", "p2", HOSTILE, "gone", "p3"]
    by_name = sorted(names, key=str.lower)
    # The name header twice (up, then down), then the state header.
    dom, console = load(clicked_in_turn(page, 0, 0, 1), tmp_path / "profile")
    assert console == []
    (first, first_sort), (second, second_sort), (by_state, state_sort) = after_each_click(dom)
    assert first == by_name and first_sort == "ascending"
    assert second == by_name[::-1] and second_sort == "descending"
    # state sorts by the order a repository moves through them, not alphabetically
    assert by_state.index("p1") < by_state.index("p2") < by_state.index("gone")
    assert state_sort == "ascending"
