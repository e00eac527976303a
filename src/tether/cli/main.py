"""Entry point: a table of commands, each in its own module, imported only when chosen.

Every command module exposes ``add_arguments(parser)`` and ``run(args) -> int``. A command
line of ``status``, ``check`` or ``update`` that ``cli/plain_argv.py`` reads whole runs
without argparse (imported, with the parser, for every other line).
"""

from __future__ import annotations

import atexit
import functools
import gc
import os
import sys
import time
from types import SimpleNamespace

from tether.cli.plain_argv import plain_arguments
from tether.cli.usage_errors import CommandLineError, unknown_command
from tether.errors import Exit, TetherError, UsageError, command_exits

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which every command pays
if TYPE_CHECKING:
    import argparse
    import signal as _signal
    from collections.abc import Callable, Sequence
    from types import FrameType, TracebackType
    from typing import Any
else:
    # The signal module wraps these functions to make enums of the signals and handlers
    # (~1.3 ms of start-up); setting one handler needs neither.
    import _signal

# name -> (module, one-line help). Keep the help short: `tether --help` lists them all.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("tether.cli.demo_cmd", "build a small upstream and adopter project and update it"),
    "init": ("tether.cli.init_cmd", "install a release into a project"),
    "status": ("tether.cli.status_cmd", "show the installed release and drift per file"),
    "check": (
        "tether.cli.check_cmd",
        "pass or fail for CI and pre-commit: exit 3 on what the project's [check] fail_on "
        "names (default: owned drift, open conflicts, an unfinished run, action items)",
    ),
    "diff": ("tether.cli.diff_cmd", "show local changes to shipped files as a unified diff"),
    "own": (
        "tether.cli.own_cmd",
        "take shipped files over: updates leave them alone (--undo gives them back)",
    ),
    "update": ("tether.cli.update_cmd", "move the project to a newer release, keeping local edits"),
    "migrations": (
        "tether.cli.migrations_cmd",
        "list the release migrations and which ones ran (--pending: still to run)",
    ),
    "pr": ("tether.cli.pr_cmd", "push a committed update's branch and open its pull request"),
    "projects": (
        "tether.cli.projects_cmd",
        "register projects for fleet commands (add, list, show, remove)",
    ),
    "fleet": ("tether.cli.fleet_cmd", "status or update every registered project at once"),
    "campaign": (
        "tether.cli.campaign_cmd",
        "roll one release out across many repositories, resumably",
    ),
    "audit": (
        "tether.cli.audit_cmd",
        "audit gate for shipped shell: scope, shellcheck, lenses, findings, clearance",
    ),
    "deps": ("tether.cli.deps_cmd", "move dependencies across the registered projects"),
    "snapshot": ("tether.cli.snapshot_cmd", "record a tree's file hashes, or check them"),
    "changelog": (
        "tether.cli.changelog_cmd",
        "show release notes and follow-ups between two versions",
    ),
    "manifest": (
        "tether.cli.manifest_cmd",
        "build the release manifest from tether.toml (publishers)",
    ),
    "release": ("tether.cli.release_cmd", "pack a reproducible release tarball and its .sha256"),
    "merge-fields": (
        "tether.cli.merge_fields_cmd",
        "field-aware merge of one JSON, YAML or TOML file",
    ),
    "verify": ("tether.cli.verify_cmd", "check that a merged file kept the adopter's lines"),
    "merge-driver": ("tether.cli.merge_driver_cmd", "git merge driver: field-aware or line merge"),
    "reapply": (
        "tether.cli.reapply_cmd",
        "merge saved local patches back into a fresh install (GSD-style)",
    ),
    "refresh": ("tether.cli.refresh_cmd", "refresh files copied into this repo from a recipe"),
    "region-compare": (
        "tether.cli.region_compare_cmd",
        "compare a region file's three sides with the region body masked",
    ),
    "completion": (
        "tether.cli.completion_cmd",
        "print a shell completion script for bash, zsh or fish",
    ),
}


def _chosen_command(argv: Sequence[str]) -> str | None:
    for arg in argv:
        if not arg.startswith("-"):
            return arg
    return None


def wants_json(argv: Sequence[str]) -> bool:
    """``--json`` was given (before any ``--``): errors then come as a JSON document too."""
    end = argv.index("--") if "--" in argv else len(argv)
    return "--json" in argv[:end]


def build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser with only the chosen command's arguments: the others' modules are never
    imported, which keeps a run (and ``tether --help``) quick."""
    return _parser_for(_chosen_command(argv))


@functools.cache
def _parser_for(chosen: str | None) -> argparse.ArgumentParser:
    # Built once per command and process: a parse keeps nothing in the parser, and a process
    # that runs the CLI many times (the test suite, an agent's library use) would otherwise
    # rebuild ~25 sub-parsers on every call. A run of one command makes that command's
    # sub-parser alone (each costs as much to make as a small command's own work); the
    # listing of every command is for ``tether --help`` and a command line that names none.
    if chosen is None:
        return _parser(lambda name: False)
    return _parser(lambda name: name == chosen, listed=lambda name: name == chosen)


def build_full_parser() -> argparse.ArgumentParser:
    """The parser with every command's arguments (for shell completion and the flag test)."""
    return _parser(lambda name: True)


def _parser(
    wanted: Callable[[str], bool], listed: Callable[[str], bool] = lambda name: True
) -> argparse.ArgumentParser:
    import importlib

    from tether import __version__
    from tether.cli.parsing import Parser, add_global_flags

    parser = Parser(
        prog="tether",
        description=(
            "Keep a project in step with its upstream release without losing local changes."
        ),
    )
    parser.add_argument("-V", "--version", action="version", version=f"tether {__version__}")
    add_global_flags(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        if not listed(name):
            continue
        command_parser = sub.add_parser(name, help=help_text, description=help_text)
        if wanted(name):
            import_pathlib_alone()
            module = importlib.import_module(module_name)
            module.add_arguments(command_parser)
            add_global_flags(command_parser)
            command_parser.set_defaults(_run=module.run)
    return parser


# Python's cyclic garbage collector runs each time 700 more objects (of the kinds it tracks)
# were made than freed and walks the young ones, every tenth time the older ones too, and
# walks every object again while the interpreter exits. A command makes most of its objects
# by importing its modules (functions, classes, tables that live as long as the process), so
# those walks found nothing to free: ~8% of a status's instructions, ~4% of an update's
# (docs/performance.md, "Start-up"). During a command the collector runs every this many
# objects instead (garbage cycles are still collected, with at most this many waiting), and at
# exit every object left is frozen, which the exit's walks skip. A garbage cycle left at exit
# is then not finalized: Python does not promise that either, and tether leaves none that
# needs it (files, locks and temp files are closed and removed by the code that made them;
# tests/cli/test_collector.py checks that a status, a check and an update leave no garbage
# with a finalizer).
RUN_GC_THRESHOLD = 100_000
_exit_walk_skipped = False


def _collector_quieter_for(thresholds: tuple[int, int, int]) -> None:
    global _exit_walk_skipped
    gc.set_threshold(max(thresholds[0], RUN_GC_THRESHOLD), *thresholds[1:])
    if not _exit_walk_skipped:  # once per process, however many commands it runs
        atexit.register(gc.freeze)
        _exit_walk_skipped = True


class _Run:
    """What the entry point learns from the command line once it is parsed."""

    verbose = False


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    started = time.monotonic()
    run = _Run()
    thresholds = gc.get_threshold()
    _collector_quieter_for(thresholds)
    try:
        code = _main(args_list, run)
    finally:
        gc.set_threshold(*thresholds)  # a process running commands in turn keeps its own
    if run.verbose:
        sys.stderr.write(f"tether: exit {code} after {time.monotonic() - started:.2f} s\n")
    return code


def _main(args_list: list[str], run: _Run) -> int:
    as_json = wants_json(args_list)
    try:
        with _TerminateAsInterrupt():
            return _run(args_list, as_json, run)
    except CommandLineError as error:
        return _fail(error.line, error.exit_code, "usage", as_json, error.usage)
    except TetherError as error:
        kind = "usage" if isinstance(error, UsageError) else "error"
        _trace_if(run.verbose)
        return _fail(f"tether: {error}", error.exit_code, kind, as_json)
    except KeyboardInterrupt:
        from tether.process import stop_all

        stop_all()  # a program still running that no caller stopped on the way out
        _trace_if(run.verbose)
        return _fail("tether: interrupted", Exit.INTERRUPTED, "interrupted", as_json)
    except BrokenPipeError:
        return Exit.ERROR
    except OSError as error:
        # The last resort for the environment refusing something no flow expected (a
        # permission, a full disk, a FIFO where a file was): one line, never a traceback
        # (unless -v asks for it).
        _trace_if(run.verbose)
        where = f"{error.filename}: " if error.filename else ""
        return _fail(f"tether: {where}{error.strerror or error}", Exit.ERROR, "error", as_json)
    except RecursionError:
        _trace_if(run.verbose)
        return _fail("tether: input nested too deeply to read", Exit.ERROR, "error", as_json)
    except Exception as error:
        if not as_json:
            raise
        import traceback

        traceback.print_exc()
        return _fail(
            f"tether: internal error: {type(error).__name__}: {error}", Exit.ERROR, "internal", True
        )


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


class _TerminateAsInterrupt:
    """SIGTERM stops a run the way Ctrl-C does (exit 130), whatever it is doing; an
    update's apply step installs its own handler that stops after the current file. (A
    class, not a ``contextlib`` generator: contextlib costs a status ~0.7 ms.)"""

    def __enter__(self) -> None:
        try:
            self._previous: Any = _signal.signal(_signal.SIGTERM, _interrupt)
        except ValueError:  # not the main thread, the only one a handler can be set from
            self._set = False
        else:
            self._set = True

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._set:
            _signal.signal(_signal.SIGTERM, self._previous)


def import_pathlib_alone() -> None:
    """Import ``pathlib`` (every command's modules use it) without ``urllib.parse``.

    Python 3.11's pathlib imports ``urllib.parse`` for one function, ``quote_from_bytes``, that
    only ``Path.as_uri`` calls; urllib.parse in turn imports ``ipaddress`` and makes six named
    tuples: ~3 ms of every command's start-up, for a function no command calls. While pathlib
    is imported, ``sys.modules`` holds a stand-in for urllib.parse whose one function imports
    the real module when called; the stand-in is removed as soon as pathlib is in, so any
    later import of urllib.parse (a release fetched over the network) loads the real one.
    A pathlib that wants more of urllib.parse than the stand-in has is imported plainly."""
    if "pathlib" in sys.modules or "urllib.parse" in sys.modules:
        return
    stand_in = type(sys)("urllib.parse")
    stand_in.quote_from_bytes = _quote_from_bytes  # type: ignore[attr-defined]
    sys.modules["urllib.parse"] = stand_in
    try:
        import pathlib
    except ImportError:
        sys.modules.pop("pathlib", None)
    finally:
        if sys.modules.get("urllib.parse") is stand_in:
            del sys.modules["urllib.parse"]
    import pathlib  # noqa: F401  (a no-op once the import above succeeded)


def _quote_from_bytes(bs: bytes, safe: str = "/") -> str:
    from urllib.parse import quote_from_bytes

    return quote_from_bytes(bs, safe)


def _trace_if(verbose: bool) -> None:
    """With -v, the traceback of the error being handled goes to stderr before its line."""
    if verbose:
        import traceback

        traceback.print_exc()


def _run(args_list: list[str], as_json: bool, run: _Run) -> int:
    chosen = _chosen_command(args_list)
    if chosen is not None and chosen not in COMMANDS:
        raise unknown_command(chosen, COMMANDS)
    plain = plain_arguments(args_list)
    if plain is not None:
        command = str(plain["command"])
        import_pathlib_alone()
        # __import__ rather than importlib, whose import (with warnings) costs ~0.4 ms
        module = __import__(COMMANDS[command][0], fromlist=["run"])
        args: argparse.Namespace | SimpleNamespace = SimpleNamespace(**plain, _run=module.run)
        run.verbose = bool(plain["verbose"])
    else:
        parsed = _parsed(args_list, run)
        if parsed is None:
            return Exit.USAGE
        args, command = parsed
    from tether import progress
    from tether.report.progress import choose

    sink = choose(
        sys.stderr, quiet=args.quiet, as_json=as_json, environ=os.environ, no_color=args.no_color
    )
    if sink is None:
        code = int(args._run(args))
    else:
        with progress.use(sink):
            code = int(args._run(args))
    return _checked_exit(command, code)


def _parsed(args_list: list[str], run: _Run) -> tuple[argparse.Namespace, str] | None:
    """The command line parsed by argparse and the command it names (``audit findings
    write``); None, after printing the help, when it names none."""
    from tether.cli.parsing import ACTIVE_PARSER, unrecognized

    parser = build_parser(args_list)
    args, extras = parser.parse_known_args(args_list)
    run.verbose = args.verbose
    active = getattr(args, ACTIVE_PARSER, parser)
    if extras:
        raise unrecognized(active, extras)
    if not getattr(args, "_run", None):
        parser.print_help()
        return None
    return args, active.prog.partition(" ")[2]  # "tether audit findings write" → its command


# Set (the test suite sets it) to stop a command that ends with a code outside its row of the
# exit table (tether.errors.COMMAND_EXITS, docs/cli.md "Exit codes per command").
CHECK_EXITS = "TETHER_CHECK_EXITS"


def _checked_exit(command: str, code: int) -> int:
    if os.environ.get(CHECK_EXITS) and code not in command_exits(command):
        raise AssertionError(f"tether {command} ended with {code}, not in its exit table row")
    return code


def _fail(line: str, exit_code: int, kind: str, as_json: bool, usage: str = "") -> int:
    """Report an error that stopped the run: its line on stderr (after the usage of the
    command it concerns, for a command-line error) and, with ``--json``, one document
    ``{"error": {"message", "kind", "exit_code"}}`` on stdout. Kinds: docs/cli.md."""
    sys.stderr.write(usage + line + "\n")
    if as_json:
        from tether.cli.common import print_json

        # The line names the program (and command) it came from; the document says what.
        message = line.split(": ", 1)[1] if line.startswith("tether") and ": " in line else line
        print_json({"error": {"message": message, "kind": kind, "exit_code": exit_code}})
    return exit_code
