"""The command lines of ``status``, ``check`` and ``update``, read without argparse.

``status`` and ``check`` run in every pre-commit hook and CI build, ``update`` is the
command people wait for: importing argparse and building the command's parser was a tenth
of the first two's time on a small project and ~5 ms of an update's (docs/performance.md,
"Small projects"). ``plain_arguments`` reads the command lines it understands whole: the
global flags before the command, then the command's own flags and the global ones, each
spelled out, a value given as the next word (not starting with ``-``) or after ``=`` on a
long flag. It returns the values argparse's parser would have made from the same line.

Anything else is left to argparse (the function answers None): help, ``--version``, a word
where none is taken, an unknown, shortened or bundled flag (``-qv``, ``-Cdir``), a value
starting with ``-``, ``--``, a flag missing its value, a value outside the flag's choices,
two flags that exclude each other (``--branch`` with ``--no-branch``). So every error, its
message and its exit code stay argparse's, and a line read here means what argparse would
make of it: ``tests/cli/test_plain_argv.py`` compares the two on many lines and the flags
of the tables here with those of argparse's parser.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which every command pays
if TYPE_CHECKING:
    from collections.abc import Sequence

# The flags every (sub)command takes (``parsing.GLOBAL_FLAGS``): before the command too.
GLOBAL_SWITCHES = {
    "-q": "quiet",
    "--quiet": "quiet",
    "-v": "verbose",
    "--verbose": "verbose",
    "--no-color": "no_color",
}
# Per command: flags without a value (argparse's store_true), and flags taking one (the last
# given wins; ``--fail-on``'s values are joined as ``common.add_list`` joins them, ``--data``'s
# collected as argparse's append does).
SWITCHES: dict[str, dict[str, str]] = {
    "status": {
        "--all": "list_all",
        "--check-latest": "check_latest",
        "--no-regions": "no_regions",
        "--json": "json",
        "--trust": "trust",
    },
    "update": {
        "--switch-upstream": "switch_upstream",
        "--dry-run": "dry_run",
        "-y": "yes",
        "--yes": "yes",
        "--delete-removed": "delete_removed",
        "--allow-dirty": "allow_dirty",
        "--no-branch": "no_branch",
        "--no-regions": "no_regions",
        "--no-programs": "no_programs",
        "--skip-migrations": "skip_migrations",
        "--abandon": "abandon",
        "--trust": "trust",
        "--all": "list_all",
        "--json": "json",
    },
}
SWITCHES["check"] = {**SWITCHES["status"], "--strict": "strict"}
VALUED: dict[str, dict[str, str]] = {
    "status": {
        "--source": "source",
        "--profile": "profile",
        "-C": "project",
        "--project": "project",
        "--answers-file": "answers_file",
    },
    "update": {
        "--to": "to",
        "--source": "source",
        "--profile": "profile",
        "--conflict": "conflict",
        "--auto": "auto",
        "--branch": "branch",
        "--answers-file": "answers_file",
        "--data": "data",
        "-C": "project",
        "--project": "project",
    },
}
VALUED["check"] = {**VALUED["status"], "--fail-on": "fail_on"}
# Flags whose values accumulate into a list of names (``common.add_list``).
NAME_LISTS = frozenset({"fail_on"})
# Flags whose every value is kept, in order (argparse's ``append``).
APPENDED = frozenset({"data"})
# Flags argparse takes only with one of its choices: where each command's choices are
# defined, read only when the flag is given (the module is one an update loads anyway).
CHOICES: dict[str, dict[str, tuple[str, str]]] = {
    "update": {
        "conflict": ("tether.model.plan", "CONFLICT_STYLES"),
        "auto": ("tether.model.plan", "AUTO_CHOICES"),
    },
}
# Flags of one mutually exclusive group: argparse refuses a line giving two of them.
EXCLUSIVE: dict[str, tuple[frozenset[str], ...]] = {
    "update": (frozenset({"branch", "no_branch"}),),
}


def plain_arguments(argv: Sequence[str]) -> dict[str, object] | None:
    """The parsed values of a ``status``, ``check`` or ``update`` command line read whole,
    else None."""
    index = 0
    values: dict[str, object] = {"quiet": False, "verbose": False, "no_color": False}
    while index < len(argv) and argv[index] in GLOBAL_SWITCHES:
        values[GLOBAL_SWITCHES[argv[index]]] = True
        index += 1
    if index == len(argv) or argv[index] not in SWITCHES:
        return None
    command = argv[index]
    switches, valued = SWITCHES[command], VALUED[command]
    values["command"] = command
    values.update(dict.fromkeys(switches.values(), False))
    values.update(dict.fromkeys(valued.values()))
    names: dict[str, list[str]] = {}
    appended: dict[str, list[str]] = {}
    given_dests: set[str] = set()
    index += 1
    while index < len(argv):
        word = argv[index]
        index += 1
        flag, equals, given = word.partition("=")
        if word in switches or word in GLOBAL_SWITCHES:
            values[switches.get(word) or GLOBAL_SWITCHES[word]] = True
            given_dests.add(switches.get(word) or GLOBAL_SWITCHES[word])
            continue
        if equals and flag.startswith("--") and flag in valued:
            value = given
        elif word in valued and index < len(argv) and not argv[index].startswith("-"):
            flag, value = word, argv[index]
            index += 1
        else:
            return None
        dest = valued[flag]
        given_dests.add(dest)
        if dest in NAME_LISTS:
            names.setdefault(dest, []).append(value)
        elif dest in APPENDED:
            appended.setdefault(dest, []).append(value)
        elif not _a_choice(command, dest, value):
            return None
        else:
            values[dest] = value
    if any(len(group & given_dests) > 1 for group in EXCLUSIVE.get(command, ())):
        return None
    values.update(appended)
    if names:
        from tether.runs.selection import split_names

        for dest, given_names in names.items():
            values[dest] = split_names(given_names)
    return values


def _a_choice(command: str, dest: str, value: str) -> bool:
    """``value`` is one argparse takes for the flag (any value, for a flag without choices)."""
    where = CHOICES.get(command, {}).get(dest)
    if where is None:
        return True
    module_name, name = where
    module = __import__(module_name, fromlist=[name])
    return value in getattr(module, name)
