"""The words of ``tether pr``: what was pushed and opened, or the body to paste."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.report.printable import lines_of, printable

if TYPE_CHECKING:
    from tether.flows.pullrequest import PullRequestReport


_PR_HEADLINES = {
    "nothing-ahead": "nothing to open yet",
    "opened": "opened pull request {url}",
    "existing": "pull request {ref} is already open; the push updated it",
    "push-failed": "the branch was not pushed; no pull request opened",
    "gh-missing": "pushed; the pull request was not opened (gh is not installed)",
    "gh-failed": "pushed; the pull request was not opened (gh failed)",
}


def render_pull_request(report: PullRequestReport) -> str:
    ref = f"#{report.number}" + (f" ({report.url})" if report.url else "")
    head = _PR_HEADLINES[report.status].format(url=report.url or "", ref=ref)
    commits = "commit" if report.ahead == 1 else "commits"
    lines = [
        f"tether pr: {head}",
        f"  {report.branch} → {report.base}: {report.ahead} {commits} ahead"
        + (f", pushed to {report.remote}" if report.pushed else ""),
        f"  title: {report.title}",
    ]
    if report.error:
        lines.append(f"  error: {report.error}")
    if report.status in ("gh-missing", "gh-failed") and report.pushed:
        # Opened by hand: everything to paste, the title above and the body here.
        lines.append("  body (paste it as the pull request's description):")
        lines += [f"    {line}" if line else "" for line in lines_of(report.body.rstrip("\n"))]
    lines += [f"note: {n}" for n in report.notes]
    if report.next_step:
        lines.append(f"Next: {report.next_step}")
    return printable("\n".join(lines))
