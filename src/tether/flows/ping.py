"""The ecosystem's update ping (GAIA Step 9: ``.gaia/cli/gaia ping --event update --from B
--to L || true``): once the new version is recorded, the project's own copy of the
ecosystem's program is told about the transition, best effort. It never fails the update
and never holds back its resumability; it is a program the release ships, so it is listed
with the others before a person confirms, a dry run never runs it, ``--no-programs``
(``TETHER_NO_PROGRAMS``) stops it, and ``TETHER_NO_UPDATE_PING=1`` stops it alone."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.flows.lifecycle_plan import ProgramCode, ProgramWhy, program_end

if TYPE_CHECKING:
    from tether.flows.project import Project, Release

NO_PING_ENV = "TETHER_NO_UPDATE_PING"
PING_TIMEOUT = 30.0  # seconds: a ping that hangs must not hold the finished update


@dataclass
class Ping:
    """``planned`` (the plan and a dry run), ``sent``, ``failed`` or ``not-run``."""

    command: str
    status: str
    reason: str = ""  # words only for the switch that stops it
    # Why it was not run or how it ended, as a fact (``reason`` is then empty): worded by
    # ``report/lifecycle_steps.ping_reason``.
    why: ProgramWhy | None = None

    def to_json(self) -> dict[str, Any]:
        """Its data; the update document's ``reason`` is ``report/``'s words of ``why``."""
        doc = {"command": self.command, "status": self.status, "reason": self.reason}
        return doc if self.why is None else {**doc, "why": self.why.to_json()}


def _argv(project: Project, from_version: str, to_version: str) -> list[str]:
    values = {"from_version": from_version, "to_version": to_version}
    return [word.format(**values) for word in project.profile.update_ping]


def plan_ping(
    project: Project, latest: Release, from_version: str, programs_off: str | None
) -> Ping | None:
    """The ping this update would send, or None when the profile has none."""
    if not project.profile.update_ping:
        return None
    command = shlex.join(_argv(project, from_version, latest.version))
    program = project.profile.update_ping[0]
    if programs_off:
        return Ping(command, "not-run", programs_off)
    if os.environ.get(NO_PING_ENV, "") not in ("", "0"):
        return Ping(command, "not-run", f"{NO_PING_ENV}={os.environ[NO_PING_ENV]}")
    if program not in latest.manifest.files:
        return Ping(command, "not-run", why=ProgramWhy(ProgramCode.NOT_SHIPPED, operand=program))
    return Ping(command, "planned")


def send_ping(project: Project, latest: Release, ping: Ping, from_version: str) -> None:
    """Run the project's merged copy of the program; whatever happens, the update stands."""
    from tether import process
    from tether.flows.regen import operand_refusal

    argv = _argv(project, from_version, latest.version)
    program = argv[0]
    shipped = set(latest.manifest.files)
    refused = operand_refusal(project.root, program, shipped)
    path = project.path(program)
    if refused is None and not path.is_file():
        refused = ProgramWhy(ProgramCode.NOT_A_FILE, operand=program)
    if refused is not None:
        ping.status, ping.why = "not-run", refused
        return
    finished = process.run(
        [str(path), *argv[1:]], timeout=PING_TIMEOUT, cwd=project.root, env=process.child_env()
    )
    ping.status = "sent" if finished.ok else "failed"
    ping.why = None if finished.ok else program_end(finished)
