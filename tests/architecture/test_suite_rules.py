"""Rules for the test suite itself, checked on its source so they cannot drift."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.architecture import syntax_trees

pytestmark = pytest.mark.usefixtures("reading_syntax_trees")

TESTS = Path(__file__).parents[1]
SPAWNERS = {"run", "Popen", "check_output", "check_call", "call"}


def _parsed(text: str) -> ast.Module:
    """A test module's syntax tree, made once per test process for the rules below."""
    return syntax_trees.parsed(text)


def _spawned_commands(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, program) for each subprocess call whose argv list starts with a literal."""
    found = []
    for node in syntax_trees.nodes(tree, ast.Call):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        first = node.args[0]
        if name in SPAWNERS and isinstance(first, ast.List) and first.elts:
            head = first.elts[0]
            if isinstance(head, ast.Constant) and isinstance(head.value, str):
                found.append((node.lineno, head.value))
    return found


def test_tests_run_tether_through_the_running_interpreter() -> None:
    """A bare ``tether`` needs the console script on PATH (a venv's python run without
    activating the venv finds none, or another install's): tests use ``builders.TETHER``."""
    bare = [
        f"{path.name}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        for line, program in _spawned_commands(_parsed(path.read_text()))
        if program == "tether"
    ]
    assert bare == []


def test_helper_modules_are_not_collected_as_tests() -> None:
    """A module named test_* is collected; helpers hold no tests and have their own names."""
    for path in TESTS.rglob("test_*.py"):
        tree = _parsed(path.read_text())
        names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
        assert any(name.startswith(("test_", "Test")) for name in names), path.name


def test_the_checker_sees_a_bare_tether() -> None:
    tree = ast.parse('subprocess.run(["tether", "status"])\nsubprocess.run([*TETHER, "x"])\n')
    assert _spawned_commands(tree) == [(1, "tether")]


def test_the_modules_run_first_exist() -> None:
    """``LONGEST_FIRST`` and ``MOSTLY_WAITING`` in tests/conftest.py name test modules (and
    tests of them) that exist, each once: a module or test renamed or moved would lose its
    place at the start of the run without a word."""
    tree = _parsed((TESTS / "conftest.py").read_text())
    lists = {
        target.id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name) and target.id in ("LONGEST_FIRST", "MOSTLY_WAITING")
    }
    assert set(lists) == {"LONGEST_FIRST", "MOSTLY_WAITING"}
    listed = [name for names in lists.values() for name in names]
    assert all(lists.values())
    assert len(set(listed)) == len(listed)
    assert all(seconds > 0 for names in lists.values() for seconds in names.values())
    missing = []
    for name in listed:
        module, _, test = name.partition("::")
        path = TESTS / module
        if not path.is_file() or (test and f"def {test}(" not in path.read_text()):
            missing.append(name)
    assert missing == []
