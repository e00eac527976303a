"""Options several commands share, and the one way to print a JSON document.

A flag means one thing on every command (docs/cli.md, "Flags"); the helpers here are how a
command takes a shared one, so its spelling, value and help cannot drift apart.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tether.errors import Exit, UsageError

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which every command pays
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from tether.runs.selection import Filters, NothingSelected
    from tether.templates import TemplateOptions

# --- spellings removed when the flags were unified ----------------------------------------

# ``add_removed``'s name for a project folder given as an argument (``tether status DIR``).
REMOVED_POSITIONAL = "DIR"


def add_removed(parser: argparse.ArgumentParser, spelling: str, instead: str) -> None:
    """Refuse ``spelling`` (a flag, or ``REMOVED_POSITIONAL`` for a project folder given as
    an argument) with one usage line (exit 2) ending in ``instead``: what to write now.

    A flag is refused the moment it is read. Words given as arguments are only collected;
    ``parsing.Parser`` refuses them once it knows no flag was mistyped: in ``update --too
    2.0`` the word is the value of a mistyped flag, and the flag is what to point at."""
    from argparse import SUPPRESS

    from tether.cli.parsing import REMOVED, STRAY_WORDS, RemovedSpelling

    if spelling == REMOVED_POSITIONAL:
        action = parser.add_argument(STRAY_WORDS, nargs="*", default=SUPPRESS, help=SUPPRESS)
        action.instead = instead  # type: ignore[attr-defined]
    else:
        action = parser.add_argument(spelling, action=RemovedSpelling, instead=instead)
    setattr(action, REMOVED, spelling)


def add_project_dir(
    parser: argparse.ArgumentParser,
    *,
    refuse_argument: bool = True,
    required: bool = False,
    help: str = "the project folder (default: the current one)",
) -> argparse.Action:
    """``-C DIR`` / ``--project DIR``. ``refuse_argument``: the command took its folder as an
    argument before (``tether status DIR``) and takes no argument now, so one given is
    refused in one line naming -C (the commands whose arguments are paths say False)."""
    option = parser.add_argument(
        "-C", "--project", dest="project", metavar="DIR", required=required, help=help
    )
    if refuse_argument:
        add_removed(parser, REMOVED_POSITIONAL, "give the project folder as -C DIR")
    return option


def project_dir(args: argparse.Namespace) -> Path:
    """The project folder: -C DIR, else the current one."""
    folder = Path(args.project or ".")
    verbose_line(args, f"project {folder.absolute()}")
    return folder


def installed_project_dir(args: argparse.Namespace) -> Path:
    """The folder of the installed project a command works on: -C DIR exactly as given,
    else the current folder or the nearest folder above it holding tether's record, as git
    finds its repository (``flows.project.find_project``; docs/cli.md, "Which project")."""
    if args.project:
        return project_dir(args)
    from tether.flows.project import find_project

    folder = find_project(Path.cwd(), getattr(args, "answers_file", None)) or Path(".")
    verbose_line(args, f"project {folder.absolute()}")
    return folder


def path_arguments(args: argparse.Namespace, paths: list[str]) -> list[str]:
    """PATH arguments as the command reads them: relative to the current folder (absolute,
    so a project found above it reads them right), or with -C relative to that folder."""
    if args.project:
        return list(paths)
    return [os.path.abspath(path) for path in paths]


def verbose_line(args: argparse.Namespace, text: str) -> None:
    """One ``tether: ...`` line on stderr, only with -v/--verbose (docs/cli.md)."""
    if getattr(args, "verbose", False):
        sys.stderr.write(f"tether: {text}\n")


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document")


def print_json(document: Any, *, versioned: bool = True) -> None:
    """Print one document, ``schema_version`` first, unless a specification fixes its shape
    (``versioned=False``: docs/cli.md, "JSON documents")."""
    if versioned and isinstance(document, dict):
        from tether.report.documents import versioned as with_version

        document = with_version(document)
    # One write: json.dump would hand stdout every token separately (tens of thousands
    # for an update of a large project).
    sys.stdout.write(json.dumps(document, indent=2, sort_keys=False) + "\n")


# --- list flags: repeated, comma-separated, or both ----------------------------------------


def add_list(
    parser: argparse.ArgumentParser,
    *spellings: str,
    metavar: str,
    help: str,
    none_when_absent: bool = False,
) -> argparse.Action:
    """A flag naming several things (projects, keywords, packages, members): repeated
    (``--keyword a --keyword b``), comma-separated (``--keyword a,b``) or both mean the same
    list. Flags taking globs or paths are only repeated: a comma is a legal character there.
    ``none_when_absent``: None when the flag is not given, so that one given with only blanks
    (``[]``) can be told from it."""
    from tether.cli.parsing import NameList

    return parser.add_argument(
        *spellings,
        action=NameList,
        default=None if none_when_absent else [],
        metavar=metavar,
        help=f"{help} (repeatable or comma-separated)",
    )


# --- -j/--jobs: one default for every command that runs work side by side -----------------

JOBS_CAP = 8
JOBS_DEFAULT_TEXT = f"CPUs + 4, at most {JOBS_CAP}"


def default_jobs() -> int:
    """How many at once when ``-j`` is not given: the work tether runs side by side (fetching
    releases and packages, planning projects, shellcheck processes) waits on disks, networks
    and child processes more than it computes, so a few more than the CPUs keeps them busy;
    the cap keeps a many-core machine from flooding a registry or a disk."""
    return min(JOBS_CAP, (os.cpu_count() or 1) + 4)


def add_jobs(parser: argparse.ArgumentParser, what: str) -> None:
    """``-j/--jobs N``: ``what`` says what runs at once (``"files checked"``)."""
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        metavar="N",
        help=f"{what} at once (default: {JOBS_DEFAULT_TEXT})",
    )


def jobs(args: argparse.Namespace) -> int:
    """The ``-j`` given, else ``default_jobs()``; fewer than one is a usage error."""
    given: int | None = args.jobs
    if given is None:
        return default_jobs()
    if given < 1:
        raise UsageError("--jobs must be at least 1")
    return given


# The most retries of one registry request: each waits twice as long as the one before.
MAX_RETRIES = 10


def request_timeout(args: argparse.Namespace, default: float) -> float:
    """``--timeout S`` (the longest wait for one step of a request), else ``default``; it
    must be a number of seconds above 0 (0 would make every socket non-blocking, a negative
    or NaN one is no wait at all)."""
    given: float = getattr(args, "timeout", default)
    if not 0 < given < float("inf"):
        raise UsageError(f"--timeout must be a number of seconds above 0, not {given:g}")
    return given


def request_retries(args: argparse.Namespace, default: int) -> int:
    """``--retries N`` (times one request is asked again), else ``default``: 0 to 10."""
    given: int = getattr(args, "retries", default)
    if not 0 <= given <= MAX_RETRIES:
        raise UsageError(f"--retries must be between 0 and {MAX_RETRIES}, not {given}")
    return given


# --- flags of the project commands ---------------------------------------------------------


def add_to(parser: argparse.ArgumentParser, help: str) -> None:
    """``--to V``: the release a command moves the project to."""
    parser.add_argument("--to", dest="to", metavar="V", help=help)


def add_source(
    parser: argparse.ArgumentParser,
    help: str = "override the recorded source",
    *,
    required: bool = False,
) -> None:
    """``--source SRC``: where releases come from (a folder, a tarball, a URL, a git repo)."""
    parser.add_argument("--source", metavar="SRC", required=required, help=help)


def add_yes(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-y", "--yes", action="store_true", help="apply without asking")


def add_all(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--all", dest="list_all", action="store_true", help="list every path, not the first 20"
    )


def list_limit(args: argparse.Namespace) -> int | None:
    from tether.report.listing import LIST_LIMIT

    return None if args.list_all else LIST_LIMIT


def add_status_arguments(parser: argparse.ArgumentParser, latest_help: str) -> None:
    """What ``status`` and ``check`` both take."""
    add_all(parser)
    parser.add_argument("--check-latest", action="store_true", help=latest_help)
    add_source(parser)
    parser.add_argument("--profile", metavar="P", help="native, gaia or gbrain (default: detected)")
    parser.add_argument(
        "--no-regions",
        action="store_true",
        help="compare generated-region files whole, as if no region were declared",
    )
    add_json(parser)
    add_project_dir(parser)


CONFLICT_TABLE = "docs/cli.md, 'Settling conflicts'"


def add_auto(
    parser: argparse.ArgumentParser, what: str, extra: tuple[str, ...] = (), more: str = ""
) -> None:
    """``--auto``: the one vocabulary for settling conflicts (docs/cli.md, "Settling
    conflicts"), on every command that settles them; ``extra`` choices a command adds."""
    from tether.model.plan import AUTO_CHOICES

    parser.add_argument(
        "--auto",
        choices=(*AUTO_CHOICES, *extra),
        help=f"{what}: ours/theirs (that side of the clashing lines, every other change of "
        f"both sides merged) or keep-mine/take-theirs (the whole file){more}; the table: "
        f"{CONFLICT_TABLE}",
    )


def add_template_arguments(parser: argparse.ArgumentParser, data: bool = True) -> None:
    """For a project copier or cruft generated (docs/templates.md); ``--data`` only where
    the release side is rendered (update)."""
    parser.add_argument(
        "--answers-file",
        metavar="PATH",
        help="copier's answers file, when not .copier-answers.yml",
    )
    if data:
        parser.add_argument(
            "--data",
            action="append",
            metavar="KEY=VALUE",
            help="a changed answer for a copier or cruft project (repeatable; recorded)",
        )
    parser.add_argument(
        "--trust",
        action="store_true",
        help="let a copier template run its migrations and tasks, a cookiecutter "
        "template its hooks",
    )


def template_options(args: argparse.Namespace) -> TemplateOptions:
    from tether.templates import TemplateOptions, parse_data

    return TemplateOptions(
        answers_file=getattr(args, "answers_file", None),
        data=parse_data(getattr(args, "data", None)),
        trust=bool(getattr(args, "trust", False)),
    )


# --- selecting registered projects (fleet, deps, campaign, projects) ---------------------


def add_registry(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--registry",
        metavar="PATH",
        help="the projects file (default: $TETHER_REGISTRY, else "
        "$XDG_CONFIG_HOME/tether/projects.json)",
    )


def add_selection(parser: argparse.ArgumentParser) -> None:
    """The registry and the filters every multi-project command (fleet, deps) takes."""
    add_projects(parser)
    add_keyword(parser, "only projects carrying every keyword given")
    add_registry(parser)


def add_projects(parser: argparse.ArgumentParser) -> None:
    add_list(parser, "--projects", metavar="NAME", help="only these registered names")


def add_keyword(parser: argparse.ArgumentParser, help: str) -> None:
    add_list(parser, "--keyword", metavar="K", help=help)


def selection_filters(args: argparse.Namespace) -> Filters:
    from tether.runs.selection import Filters

    return Filters(args.registry, args.projects, args.keyword)


def print_nothing_selected(result: NothingSelected, as_json: bool) -> int:
    """Nothing to work on: under ``--json`` the command's own document, with no project."""
    print_json(dict(result.document)) if as_json else print("\n".join(result.lines()))
    return Exit.OK
