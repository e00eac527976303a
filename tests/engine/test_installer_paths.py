"""The paths GSD's installer rewrites (``engine.installer_paths``), on our own tiny texts:
the forms it would write, and the files it copies as they are."""

from __future__ import annotations

from tether.engine.installer_paths import install_prefixes, installed_forms

AGENT = b"Use ~/.claude/x and $HOME/.claude/y; the folder ~/.claude; not ~/.claudette.\n"


def test_an_agent_gets_every_spelling_of_the_folder_rewritten() -> None:
    [(prefix, form)] = installed_forms("agents/gsd-a.md", AGENT, ["$HOME/cfg/"], [".claude"])
    assert prefix == "$HOME/cfg/"
    assert form == b"Use $HOME/cfg/x and $HOME/cfg/y; the folder $HOME/cfg; not ~/.claudette.\n"


def test_a_workflow_keeps_the_bare_folder_and_gets_the_local_folder_name() -> None:
    text = b"~/.claude/a ~/.claude ./.claude/b ~/.qwen/c ./.qwen/d\n"
    forms = installed_forms("get-shit-done/w/x.md", text, ["/abs/.gemini/"], [".claude", ".gemini"])
    assert [form for _, form in forms] == [
        b"/abs/.gemini/a ~/.claude ./.claude/b /abs/.gemini/c ./.claude/d\n",
        b"/abs/.gemini/a ~/.claude ./.gemini/b /abs/.gemini/c ./.gemini/d\n",
    ]


def test_a_dollar_in_the_prefix_is_read_as_javascript_reads_a_replacement() -> None:
    [(_, form)] = installed_forms("agents/gsd-a.md", b"~/.claude/x\n", ["/h/a$$b/"], [".claude"])
    assert form == b"/h/a$b/x\n"


def test_files_the_installer_copies_as_they_are_have_no_other_form() -> None:
    assert installed_forms("hooks/gsd-check.js", b"~/.claude/x", ["$HOME/c/"], [".claude"]) == []
    assert installed_forms("agents/sub/gsd-a.md", AGENT, ["$HOME/c/"], [".claude"]) == []
    assert installed_forms("agents/gsd-a.md", b"no path here\n", ["$HOME/c/"], [".claude"]) == []
    not_utf8 = b"~/.claude/x \xff\n"
    assert installed_forms("agents/gsd-a.md", not_utf8, ["$HOME/c/"], [".claude"]) == []


def test_a_folder_whose_name_is_not_utf8_gives_no_form_and_no_error() -> None:
    # A path read from the disk with os.fsdecode carries the byte 0xe9 as a lone surrogate.
    prefix = "/tmp/caf\udce9/.claude/"
    assert installed_forms("agents/gsd-a.md", b"~/.claude/x\n", [prefix], [".claude"]) == []
    assert installed_forms("get-shit-done/x.md", b"./.claude/x\n", ["$HOME/c/"], [prefix]) == []


def test_the_prefixes_of_a_global_and_of_a_local_install() -> None:
    assert install_prefixes(["/home/me/.claude"], ["/home/me"]) == [
        "$HOME/.claude/",
        "/home/me/.claude/",
    ]
    assert install_prefixes(["/work/p/.claude", "/work/p/.claude"], ["/home/me"]) == [
        "/work/p/.claude/"
    ]
