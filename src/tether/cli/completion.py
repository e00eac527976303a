"""Shell completion scripts for bash, zsh and fish, generated from the parser itself.

The scripts hold the command table as data (sub-commands, flags, which flags take a value,
each flag's choices), so they complete exactly what this tether accepts without running
tether on every key press; regenerate them after an upgrade. Removed spellings (refused
with a pointer to their replacement) are left out. A flag's value without fixed choices
completes as a file name, as does a positional argument.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from tether.cli.parsing import is_removed

SHELLS = ("bash", "zsh", "fish")


@dataclass(frozen=True)
class Flag:
    spellings: tuple[str, ...]
    takes_value: bool
    choices: tuple[str, ...]
    help: str


@dataclass(frozen=True)
class Node:
    """One (sub)command: the words that lead to it, and what may follow."""

    path: str  # "" for tether itself, "audit findings" for a nested one
    commands: tuple[tuple[str, str], ...]  # (name, help)
    flags: tuple[Flag, ...]
    choices: tuple[str, ...]  # fixed values of a positional argument
    files: bool  # takes a positional argument that is not a sub-command


def nodes(parser: argparse.ArgumentParser, path: str = "") -> list[Node]:
    """Every (sub)command under ``parser``, depth first, ``parser`` itself first."""
    commands: list[tuple[str, str]] = []
    below: list[Node] = []
    flags: list[Flag] = []
    choices: tuple[str, ...] = ()
    files = False
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                commands.append((name, helps.get(name, "")))
                below += nodes(sub, f"{path} {name}".strip())
        elif is_removed(action):
            continue  # refused with a pointer to its replacement: never offered
        elif action.option_strings:
            values = tuple(str(c) for c in action.choices or ())
            flags.append(
                Flag(tuple(action.option_strings), action.nargs != 0, values, _help(action))
            )
        elif action.choices:
            choices = tuple(str(c) for c in action.choices)
        else:
            files = True
    return [Node(path, tuple(commands), tuple(flags), choices, files), *below]


def _help(action: argparse.Action) -> str:
    text = action.help if action.help and action.help != argparse.SUPPRESS else ""
    return " ".join(text.split())


def script(shell: str, parser: argparse.ArgumentParser, version: str) -> str:
    """The completion script for ``shell`` (one of ``SHELLS``)."""
    tree = nodes(parser)
    head = f"# {shell} completion for tether {version}, written by `tether completion {shell}`\n"
    if shell == "fish":
        return head + _fish(tree)
    body = _data_functions(tree)
    return head + (_bash(body) if shell == "bash" else _zsh(body))


# --- bash and zsh share the data, written as POSIX-style functions -------------------------


def _case(name: str, rows: list[tuple[str, str]]) -> str:
    lines = [f"{name}() {{", '    case "$1" in']
    lines += [
        f"        {_sh_quote(key)}) echo {_sh_quote(value)} ;;" for key, value in rows if value
    ]
    lines += ["    esac", "}", ""]
    return "\n".join(lines)


def _data_functions(tree: list[Node]) -> str:
    commands = [(n.path, " ".join(name for name, _ in n.commands)) for n in tree]
    options = [(n.path, " ".join(s for f in n.flags for s in f.spellings)) for n in tree]
    valued = [
        (n.path, " ".join(s for f in n.flags if f.takes_value for s in f.spellings)) for n in tree
    ]
    choices = [(n.path, " ".join(n.choices)) for n in tree]
    choices += [
        (f"{n.path} {spelling}".strip(), " ".join(f.choices))
        for n in tree
        for f in n.flags
        if f.choices
        for spelling in f.spellings
    ]
    return "".join(
        [
            _case("_tether_commands", commands),
            _case("_tether_options", options),
            _case("_tether_valued", valued),
            _case("_tether_choices", choices),
        ]
    )


# Walks the words before the cursor: a known sub-command extends the path, a flag that takes
# a value skips the word after it. Shared by bash and zsh (the array and indices differ).
_WALK = """\
    local cmdpath="" word skip=0 i
    for ((i = {first}; i < {cursor}; i++)); do
        word="${{{words}[i]}}"
        if ((skip)); then
            skip=0
            continue
        fi
        case "$word" in
            --*=*) continue ;;
            -*)
                [[ " $(_tether_valued "$cmdpath") " == *" $word "* ]] && skip=1
                continue
                ;;
        esac
        if [[ " $(_tether_commands "$cmdpath") " == *" $word "* ]]; then
            cmdpath="${{cmdpath:+$cmdpath }}$word"
        fi
    done
"""


def _bash(data: str) -> str:
    walk = _WALK.format(first=1, cursor="COMP_CWORD", words="COMP_WORDS")
    return f"""{data}_tether() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
{walk}    COMPREPLY=()
    if [[ "$prev" == -* && " $(_tether_valued "$cmdpath") " == *" $prev "* ]]; then
        # A value: its choices, else (-o default) file names.
        COMPREPLY=($(compgen -W "$(_tether_choices "${{cmdpath:+$cmdpath }}$prev")" -- "$cur"))
        return 0
    fi
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$(_tether_options "$cmdpath")" -- "$cur"))
        return 0
    fi
    local offered="$(_tether_commands "$cmdpath") $(_tether_choices "$cmdpath")"
    COMPREPLY=($(compgen -W "$offered" -- "$cur"))
    return 0
}}

complete -o default -F _tether tether
"""


def _zsh(data: str) -> str:
    walk = _WALK.format(first=2, cursor="CURRENT", words="words")
    return f"""#compdef tether

{data}_tether() {{
    local cur="${{words[CURRENT]}}" prev="${{words[CURRENT-1]}}"
{walk}    if [[ "$prev" == -* && " $(_tether_valued "$cmdpath") " == *" $prev "* ]]; then
        local values="$(_tether_choices "${{cmdpath:+$cmdpath }}$prev")"
        if [[ -n "$values" ]]; then
            compadd -- ${{=values}}
        else
            _files
        fi
        return
    fi
    if [[ "$cur" == -* ]]; then
        compadd -- ${{=$(_tether_options "$cmdpath")}}
        return
    fi
    local offered="$(_tether_commands "$cmdpath") $(_tether_choices "$cmdpath")"
    if [[ -n "${{offered// /}}" ]]; then
        compadd -- ${{=offered}}
    else
        _files
    fi
}}

if [[ "${{zsh_eval_context[-1]}}" == loadautofunc ]]; then
    _tether "$@"
else
    compdef _tether tether
fi
"""


# --- fish: one `complete` line per sub-command and flag ------------------------------------


def _fish(tree: list[Node]) -> str:
    lines = [_FISH_PATH]
    lines.append("function __tether_commands")
    lines.append('    switch "$argv[1]"')
    for node in tree:
        if node.commands:
            names = " ".join(_fish_quote(name) for name, _ in node.commands)
            lines += [
                f"        case {_fish_quote(node.path)}",
                f"            printf '%s\\n' {names}",
            ]
    lines += ["    end", "end", ""]
    lines.append("function __tether_valued")
    lines.append('    switch "$argv[1]"')
    for node in tree:
        valued = [s for f in node.flags if f.takes_value for s in f.spellings]
        if valued:
            listed = " ".join(_fish_quote(s) for s in valued)
            lines += [
                f"        case {_fish_quote(node.path)}",
                f"            printf '%s\\n' {listed}",
            ]
    lines += ["    end", "end", ""]
    for node in tree:
        at = f"-n {_fish_quote(f'__tether_at {_fish_quote(node.path)}')}"
        if node.commands or node.choices or not node.files:
            lines.append(f"complete -c tether {at} -f")
        for name, text in node.commands:
            lines.append(f"complete -c tether {at} -a {_fish_quote(name)} -d {_fish_quote(text)}")
        if node.choices:
            lines.append(f"complete -c tether {at} -a {_fish_quote(' '.join(node.choices))}")
        for flag in node.flags:
            lines.append(f"complete -c tether {at} {_fish_flag(flag)}")
    return "\n".join(lines) + "\n"


def _fish_flag(flag: Flag) -> str:
    parts = []
    for spelling in flag.spellings:
        if spelling.startswith("--"):
            parts.append(f"-l {_fish_quote(spelling[2:])}")
        else:
            parts.append(f"-s {_fish_quote(spelling[1:])}")
    if flag.choices:
        parts.append(f"-x -a {_fish_quote(' '.join(flag.choices))}")
    elif flag.takes_value:
        parts.append("-r")
    if flag.help:
        parts.append(f"-d {_fish_quote(flag.help)}")
    return " ".join(parts)


# The sub-command the words before the cursor lead to ("" for tether itself), kept for the
# command line it was worked out for: every `complete` condition asks for it.
_FISH_PATH = """\
function __tether_path
    set -l line (commandline -pc)
    if test "$line" = "$__tether_path_line"
        echo $__tether_path_value
        return
    end
    set -l tokens (commandline -opc)
    set -l cmdpath ''
    set -l skip 0
    for word in $tokens[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $word
            case '--*=*'
                continue
            case '-*'
                if contains -- $word (__tether_valued "$cmdpath")
                    set skip 1
                end
                continue
        end
        if contains -- $word (__tether_commands "$cmdpath")
            set cmdpath (string trim -- "$cmdpath $word")
        end
    end
    set -g __tether_path_line $line
    set -g __tether_path_value $cmdpath
    echo $cmdpath
end

function __tether_at
    test (__tether_path) = "$argv[1]"
end
"""


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
