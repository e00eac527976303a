"""The words of ``tether pr``: what was pushed and opened, or the body to paste."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
    lines += [f"note: {n}" for n in pull_request_notes(report)]
    step = next_step(report)
    if step:
        lines.append(f"Next: {step}")
    return printable("\n".join(lines))


def pull_request_document(report: PullRequestReport) -> dict[str, Any]:
    """The JSON document of ``tether pr``: the report's facts, what to do next and the
    notes, in words."""
    return {
        **report.to_json(),
        "next_step": next_step(report),
        "notes": pull_request_notes(report),
    }


def pull_request_notes(report: PullRequestReport) -> list[str]:
    if not report.uncommitted:
        return []
    return [
        f"{report.uncommitted} file(s) have uncommitted changes; they are not part of the "
        "pull request until you commit them (and run 'tether pr' again)"
    ]


def next_step(report: PullRequestReport) -> str:
    """What the person does now, by hand when tether could not; "" when nothing is left."""
    if report.status == "nothing-ahead":
        return (
            f"nothing is committed on {report.branch} that {report.base} lacks: review the "
            "update (git diff), commit it, then run 'tether pr' again"
        )
    if report.status == "push-failed":
        return (
            "resolve the push error, then run 'tether pr' again, or push "
            f"(git push -u {report.remote} {report.branch}) and open the pull request by hand: "
            + _by_hand(report)
        )
    if report.status == "gh-missing":
        return (
            f"the branch is pushed to {report.remote}; open the pull request by hand: "
            + _by_hand(report)
        )
    if report.status == "gh-failed":
        return (
            f"the branch is pushed to {report.remote}; open the pull request by hand (or check "
            f"for one already open): {_by_hand(report)}"
        )
    return ""


def _by_hand(report: PullRequestReport) -> str:
    return f"{report.branch} → {report.base}, titled {report.title!r}"
