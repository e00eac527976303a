"""How fast a campaign opens pull requests: a budget the coordinator holds and spends.

Two limits, each optional (docs/campaigns.md, "Pacing"):

- ``max_open_prs``: never more than N of the campaign's pull requests open at once. The
  count starts from the records already ``pr-open`` (after their states are read back from
  gh), and a pull request found open for a campaign branch counts like one tether opened.
- ``prs_per_hour``: at most N pull requests opened in any rolling hour. Every opening is
  written to the campaign's ledger (``pacing.json``) *before* gh is asked to open it, so a
  coordinator killed between the two over-counts by one and never under-counts; once gh
  answers, the entry is moved to that moment, the latest the opening can have happened.

When a limit is reached the coordinator stops and says when to come back (the hourly
budget) or that it waits for pull requests to be merged or closed (the open limit); the
records stay where they were and the next ``campaign pr`` continues. Only ``wait`` makes it
sleep, and only for the hourly budget, whose end it knows.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tether.errors import TetherError, UsageError
from tether.fsio import atomic_write, read_bytes
from tether.parselimits import json_loads

HOUR = 3600.0
LEDGER_FILE = "pacing.json"
# Openings older than this leave the ledger; no window looks further back.
LEDGER_KEEPS = 24 * HOUR


@dataclass(frozen=True)
class Pacing:
    max_open_prs: int | None = None
    prs_per_hour: int | None = None
    wait: bool = False  # sleep until the hourly budget has room instead of stopping
    window: float = HOUR  # the rolling window prs_per_hour counts in

    def __post_init__(self) -> None:
        for flag, value in (
            ("--max-open-prs", self.max_open_prs),
            ("--prs-per-hour", self.prs_per_hour),
        ):
            if value is not None and value < 1:
                raise UsageError(f"{flag} must be at least 1")
        if self.window <= 0:
            raise UsageError("the pacing window must be positive")

    def to_json(self) -> dict[str, int | bool | None]:
        return {
            "max_open_prs": self.max_open_prs,
            "prs_per_hour": self.prs_per_hour,
            "wait": self.wait,
        }


@dataclass(frozen=True)
class Stop:
    """Which limit stopped the coordinator opening pull requests, and when it may go on."""

    limit: str  # max_open_prs | prs_per_hour
    value: int  # the limit given
    reached: int  # pull requests open now, or opened in the window
    resume_at: str | None  # ISO time the hourly budget has room again; None: not known

    def to_json(self) -> dict[str, str | int | None]:
        return {
            "limit": self.limit,
            "value": self.value,
            "reached": self.reached,
            "resume_at": self.resume_at,
        }


class Budget:
    """The pacing of one coordinator: the open pull requests it counts and the ledger of
    openings it writes. Nothing else spends from it."""

    def __init__(self, pacing: Pacing, folder: Path, open_now: int) -> None:
        self.pacing = pacing
        self.ledger = folder / LEDGER_FILE
        self.open_now = open_now
        self.opened = _read_ledger(self.ledger)

    def room(self) -> Stop | None:
        """None when one more pull request may be opened now; else why not. With ``wait``
        it sleeps out a spent hourly budget first."""
        limit = self.pacing.max_open_prs
        if limit is not None and self.open_now >= limit:
            return Stop("max_open_prs", limit, self.open_now, None)
        free_at = self._hour_free_at(time.time())
        if free_at is None:
            return None
        if self.pacing.wait:
            time.sleep(max(0.0, free_at - time.time()))
            return self.room()
        hourly = self.pacing.prs_per_hour or 0
        return Stop("prs_per_hour", hourly, self.opened_in_window(), _iso(free_at))

    def _hour_free_at(self, now: float) -> float | None:
        """When the rolling window next has room, None when it has room now."""
        limit = self.pacing.prs_per_hour
        if limit is None:
            return None
        recent = sorted(t for t in self.opened if t > now - self.pacing.window)
        if len(recent) < limit:
            return None
        return recent[len(recent) - limit] + self.pacing.window

    def spend(self) -> None:
        """Write down one opening, durably, before gh is asked to make it."""
        now = time.time()
        self._write([t for t in self.opened if t > now - LEDGER_KEEPS] + [now])
        self.open_now += 1

    def settle(self) -> None:
        """gh has answered: the opening counts from now, the latest it can have happened,
        so the window never ends early. (Killed before this, the time asked stays.)"""
        if self.opened:
            self._write([*self.opened[:-1], time.time()])

    def _write(self, opened: list[float]) -> None:
        self.opened = opened
        document = {"pull_requests_opened": opened}
        atomic_write(self.ledger, (json.dumps(document, indent=2) + "\n").encode())

    def counted(self) -> None:
        """A pull request found open (not opened here) now counts toward the open limit."""
        self.open_now += 1

    def opened_in_window(self) -> int:
        now = time.time()
        return sum(1 for t in self.opened if t > now - self.pacing.window)


def _read_ledger(path: Path) -> list[float]:
    try:
        data = json_loads(read_bytes(path).decode("utf-8"))
        return [float(t) for t in data["pull_requests_opened"]]
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        raise TetherError(f"campaign file is unreadable: {path}: {error}") from None


def _iso(epoch: float) -> str:
    """The whole second at or after ``epoch``: a time to come back, never too early."""
    return (
        datetime.fromtimestamp(math.ceil(epoch), UTC)
        .isoformat(timespec="seconds")
        .replace("+00:00", "Z")
    )
