"""``campaign status --html FILE``: the status document, and the same as a web page."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from tether.campaign.commands import CampaignResult, campaign_status
from tether.errors import TetherError
from tether.fsio import atomic_write


def write_status_page(name: str, directory: str | None, page: str) -> CampaignResult:
    """The campaign's status (reads only), also written to ``page`` as one self-contained
    HTML file (report/campaign_html.py), replaced atomically."""
    from tether.report.campaign_html import render_status_page

    result = campaign_status(name, directory)
    path = Path(page).expanduser()
    if path.is_dir():
        raise TetherError(f"cannot write the page {path}: it is a folder")
    html = render_status_page(result.document, datetime.now(UTC))
    try:
        atomic_write(path, html.encode("utf-8"), durable=False)
    except OSError as error:
        raise TetherError(f"cannot write the page {path}: {error.strerror or error}") from None
    return result
