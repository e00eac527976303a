"""``campaign status --html FILE``: the campaign as one self-contained web page.

Everything is in the file: inline CSS, an inline SVG bar chart, a small inline script that
sorts the table when a column's header is clicked. The page loads nothing (its Content
Security Policy forbids every fetch), so it can be mailed, archived or opened offline.
Every value from the campaign (names, URLs, reasons, paths) is escaped; a PR link becomes a
link only when it is an http(s) URL.

A pure function of the campaign document (report/campaign.py) and the time it is made at.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from html import escape
from typing import Any

from tether.report.campaign import STATE_ORDER

Doc = Mapping[str, Any]

# Beyond STATE_ORDER: the states a campaign's pull requests go through.
STATE_COLOURS = {
    "pending": "#9aa0a6",
    "cloned": "#8ab4f8",
    "updated": "#34a853",
    "conflicts": "#f29900",
    "up-to-date": "#12b5cb",
    "failed": "#d93025",
    "pushed": "#4285f4",
    "pr-open": "#a142f4",
    "merged": "#188038",
    "closed": "#5f6368",
}
OTHER_COLOUR = "#bdc1c6"
PR_LINK_KEYS = ("pr_url",)  # the record field holding a repository's pull request, when any

_POLICY = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #202124; }
h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
.meta { color: #5f6368; margin: 0 0 1rem; }
.counts { display: flex; flex-wrap: wrap; gap: .5rem; padding: 0; list-style: none; }
.counts li { border: 1px solid #dadce0; border-radius: 6px; padding: .25rem .6rem; }
.counts b { font-size: 1.1rem; margin-left: .3rem; }
.dot { display: inline-block; width: .7rem; height: .7rem; border-radius: 50%;
       margin-right: .3rem; vertical-align: middle; }
svg text { font: 12px system-ui, sans-serif; fill: #202124; }
table { border-collapse: collapse; width: 100%; margin-top: 1rem; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #e8eaed;
         vertical-align: top; }
th button { font: inherit; font-weight: 600; border: 0; background: none; padding: 0;
            cursor: pointer; }
th[aria-sort=ascending] button::after { content: " \\25B2"; }
th[aria-sort=descending] button::after { content: " \\25BC"; }
.reason, .paths { color: #5f6368; font-size: .9em; }
.num { text-align: right; }
"""

# Sorts by a cell's data-sort value when it has one (numbers for data-type="number"), else
# by its text; a second click on the same header reverses the order.
_SCRIPT = """
(function () {
  var table = document.getElementById("repositories");
  var body = table.tBodies[0];
  var heads = table.tHead.rows[0].cells;
  function value(row, index, numeric) {
    var cell = row.cells[index];
    var raw = cell.getAttribute("data-sort");
    if (raw === null) { raw = cell.textContent; }
    return numeric ? parseFloat(raw) : raw.toLowerCase();
  }
  Array.prototype.forEach.call(heads, function (head, index) {
    head.addEventListener("click", function () {
      var numeric = head.getAttribute("data-type") === "number";
      var order = head.getAttribute("aria-sort") === "ascending" ? -1 : 1;
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      head.setAttribute("aria-sort", order === 1 ? "ascending" : "descending");
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = value(a, index, numeric), y = value(b, index, numeric);
        return (x < y ? -1 : x > y ? 1 : 0) * order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
})();
"""

# (header, data-type): the table's columns, in order.
COLUMNS = (
    ("repository", "text"),
    ("state", "number"),
    ("version", "text"),
    ("buckets", "number"),
    ("conflicts", "number"),
    ("pull request", "text"),
    ("age", "number"),
)


def page_written(path: str) -> str:
    return f"page: {path}"


def render_status_page(document: Doc, now: datetime) -> str:
    records = document["repositories"]
    title = f"campaign {document['campaign']}"
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="meta">{_e(_summary(document, now))}</p>',
        _counts(document["counts"]),
        _chart(document["counts"]),
        _table(records, now),
        f"<script>{_SCRIPT}</script>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _summary(document: Doc, now: datetime) -> str:
    return (
        f"{document['upstream']} → {document['to_version']} on branch {document['branch']} · "
        f"on conflict: {document['on_conflict']} · {len(document['repositories'])} "
        f"repositories · made {now.astimezone(UTC).strftime('%Y-%m-%d %H:%M:%S')} UTC"
    )


def _colour(state: str) -> str:
    return STATE_COLOURS.get(state, OTHER_COLOUR)


def _counts(counts: Mapping[str, int]) -> str:
    items = "".join(
        f'<li data-state="{_e(state)}"><span class="dot" style="background:{_colour(state)}">'
        f"</span>{_e(state)}<b>{int(count)}</b></li>"
        for state, count in counts.items()
    )
    return f'<ul class="counts" id="counts">{items}</ul>'


def _chart(counts: Mapping[str, int]) -> str:
    """One horizontal bar per state, its length the share of the largest count."""
    row, label, width = 22, 110, 420
    most = max(counts.values(), default=0) or 1
    bars = []
    for index, (state, count) in enumerate(counts.items()):
        y = index * row
        length = round(width * int(count) / most)
        bars.append(
            f'<g data-state="{_e(state)}"><text x="0" y="{y + 15}">{_e(state)}</text>'
            f'<rect x="{label}" y="{y + 3}" width="{length}" height="{row - 6}" '
            f'fill="{_colour(state)}"></rect>'
            f'<text x="{label + length + 6}" y="{y + 15}">{int(count)}</text></g>'
        )
    height = row * len(counts)
    total = label + width + 40
    return (
        f'<svg id="outcomes" role="img" aria-label="repositories per state" '
        f'width="{total}" height="{height}" viewBox="0 0 {total} {height}" '
        f'xmlns="http://www.w3.org/2000/svg">{"".join(bars)}</svg>'
    )


def _table(records: Sequence[Doc], now: datetime) -> str:
    heads = "".join(
        f'<th scope="col" data-type="{kind}"><button type="button">{_e(name)}</button></th>'
        for name, kind in COLUMNS
    )
    rows = "\n".join(_row(record, now) for record in records)
    return (
        f'<table id="repositories"><thead><tr>{heads}</tr></thead><tbody>\n{rows}\n</tbody></table>'
    )


def _row(record: Doc, now: datetime) -> str:
    state = str(record["status"])
    order = STATE_ORDER.index(state) if state in STATE_ORDER else len(STATE_ORDER)
    reason = f'<div class="reason">{_e(record["reason"])}</div>' if record.get("reason") else ""
    buckets = record.get("buckets") or {}
    conflicts = list(record.get("conflicts") or ())
    # A pull request's age once it is open; before that, the time since the record changed.
    age = _age_seconds(str(record.get("pr_opened_at") or record.get("updated_at") or ""), now)
    cells = [
        f'<td title="{_e(record["url"])}">{_e(record["name"])}</td>',
        f'<td data-sort="{order}" data-state="{_e(state)}">'
        f'<span class="dot" style="background:{_colour(state)}"></span>{_e(state)}{reason}</td>',
        f"<td>{_e(_versions(record))}</td>",
        f'<td data-sort="{sum(int(n) for n in buckets.values())}">'
        f"{_e(' · '.join(f'{b} {n}' for b, n in buckets.items()))}</td>",
        f'<td class="num" data-sort="{len(conflicts)}">{_conflicts(conflicts)}</td>',
        f"<td>{_pr_link(record)}</td>",
        f'<td class="num" data-sort="{-1 if age is None else age}">{_e(_age_text(age))}</td>',
    ]
    return f'<tr data-repo="{_e(record["name"])}">{"".join(cells)}</tr>'


def _versions(record: Doc) -> str:
    old, new = record.get("from_version") or "", record.get("to_version") or ""
    return f"{old} → {new}" if old or new else ""


def _conflicts(paths: Sequence[str]) -> str:
    if not paths:
        return "0"
    shown = "<br>".join(_e(p) for p in paths[:5])
    more = f"<br>+{len(paths) - 5} more" if len(paths) > 5 else ""
    return f'{len(paths)}<div class="paths">{shown}{more}</div>'


def _pr_link(record: Doc) -> str:
    for key in PR_LINK_KEYS:
        url = record.get(key)
        if isinstance(url, str) and url.startswith(("https://", "http://")):
            shown = url.rsplit("/", 1)[-1]
            label = f"#{shown}" if shown.isdigit() else "pull request"
            return f'<a href="{_e(url)}" rel="noreferrer">{_e(label)}</a>'
    return ""


def _age_seconds(stamp: str, now: datetime) -> int | None:
    try:
        then = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    return max(0, int((now - then).total_seconds()))


def _age_text(seconds: int | None) -> str:
    """``45s``, ``12m``, ``3h 05m``, ``2d 04h``: the two largest units."""
    if seconds is None:
        return ""
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    if days:
        return f"{days}d {hours % 24:02d}h"
    if hours:
        return f"{hours}h {minutes % 60:02d}m"
    return f"{minutes}m" if minutes else f"{seconds}s"
