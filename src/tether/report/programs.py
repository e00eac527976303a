"""The words for how a program tether started ended (``process.Finished``, the fact the
process edge returns): ``exited 3``, ``timed out after 5 s (… sets it); its process group
was stopped``, ``was killed by signal 9``, ``could not start 'npm': …``. The same words as a
release's program's end (``report/lifecycle_steps.how_it_ended``), of which they are made."""

from __future__ import annotations

from tether.flows.lifecycle_plan import program_end
from tether.report.lifecycle_steps import how_it_ended, program_reason

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tether.process import Finished


def program_ended(run: Finished) -> str:
    """What happened, without the program's name (``could not start 'x': …`` names it)."""
    why = program_end(run)
    return how_it_ended(why) if run.started else program_reason(why)


def program_failure(run: Finished, command: str | None = None) -> str:
    """One line naming the command (``command``, else the argv) and what happened."""
    if not run.started:
        return program_ended(run)
    if command is None:
        import shlex  # only to word a program's command line

        command = shlex.join(run.argv)
    return f"{command} {program_ended(run)}"
