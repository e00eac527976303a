"""The command lines of ``status`` and ``check``, read without argparse.

Both commands run in every pre-commit hook and CI build, where importing argparse and
building its parser was a tenth of their time on a small project (docs/performance.md,
"Small projects"). ``plain_arguments`` reads the command lines it understands whole: the
global flags before the command, then the command's own flags and the global ones, each
spelled out, a value given as the next word (not starting with ``-``) or after ``=`` on a
long flag. It returns the values argparse's parser would have made from the same line.

Anything else is left to argparse (the function answers None): help, ``--version``, a word
where none is taken, an unknown, shortened or bundled flag (``-qv``, ``-Cdir``), a value
starting with ``-``, ``--``, a flag missing its value. So every error, its message and its
exit code stay argparse's, and a line read here means what argparse would make of it:
``tests/cli/test_plain_argv.py`` compares the two on many lines and the flags of the two
tables here with those of argparse's parser.
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
# given wins; ``--fail-on``'s values are joined as ``common.add_list`` joins them).
SWITCHES: dict[str, dict[str, str]] = {
    "status": {
        "--all": "list_all",
        "--check-latest": "check_latest",
        "--no-regions": "no_regions",
        "--json": "json",
        "--trust": "trust",
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
}
VALUED["check"] = {**VALUED["status"], "--fail-on": "fail_on"}
# Flags whose values accumulate into a list of names (``common.add_list``).
NAME_LISTS = frozenset({"fail_on"})


def plain_arguments(argv: Sequence[str]) -> dict[str, object] | None:
    """The parsed values of a ``status`` or ``check`` command line read whole, else None."""
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
    index += 1
    while index < len(argv):
        word = argv[index]
        index += 1
        flag, equals, given = word.partition("=")
        if word in switches or word in GLOBAL_SWITCHES:
            values[switches.get(word) or GLOBAL_SWITCHES[word]] = True
            continue
        if equals and flag.startswith("--") and flag in valued:
            value = given
        elif word in valued and index < len(argv) and not argv[index].startswith("-"):
            flag, value = word, argv[index]
            index += 1
        else:
            return None
        dest = valued[flag]
        if dest in NAME_LISTS:
            names.setdefault(dest, []).append(value)
        else:
            values[dest] = value
    if names:
        from tether.runs.selection import split_names

        for dest, given_names in names.items():
            values[dest] = split_names(given_names)
    return values
