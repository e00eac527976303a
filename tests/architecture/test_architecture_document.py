"""docs/architecture.md names the code it describes: every module, folder and name it cites
exists, its layer table is the checker's (``LAYER_OF``, ``LAYERS``), its lists of profiles,
of ``report/`` modules and of test folders are what the code holds. A rename or a removal
fails here until the page says it too."""

from __future__ import annotations

import ast
import fnmatch
import functools
import re
from pathlib import Path

import pytest

from tests.architecture import syntax_trees
from tests.architecture.test_architecture import (
    LAYER_OF,
    LAYERS,
    PROCESS_MODULES,
    PROCESS_STARTING_ASYNCIO,
    PROCESS_STARTING_MODULES,
    PROCESS_STARTING_OS_CALLS,
    SIDE_EFFECT_MODULES,
    SOURCE,
)
from tether.profiles import PROFILES, TEMPLATE_PROFILES

pytestmark = pytest.mark.usefixtures("reading_syntax_trees")

ROOT = SOURCE.parents[1]
TESTS = ROOT / "tests"
DOCUMENT = ROOT / "docs" / "architecture.md"

# A path the page cites: `flows/apply.py`, `engine/structured/`, `docs/update.md`, and in the
# update's path (the code block) `flows/replay` or `state/store` without the suffix.
PATH = re.compile(r"(?:[a-z_]+/)*[a-z_]+(?:\.(?:py|md|toml))?/?")
# The page's examples of a rule name modules of one letter (`tether.a.b`, `a/b`).
PLACEHOLDER = re.compile(r"(?:^|[./])[a-z](?:[./]|$)")
# A name in a module: `flows/update.run_update`, `model.plan.UpdatePlan`, `git.one_command()`.
MODULE_NAME = re.compile(
    r"(?P<module>[a-z_][a-z_0-9]*(?:[./][a-z_][a-z_0-9]*)*)\.(?P<name>\w+)(?:\(\))?"
)
# A member of a class: `PathGuard.write`, `UpdateReport.to_json()`.
CLASS_MEMBER = re.compile(r"(?P<cls>[A-Z][A-Za-z0-9]*)\.(?P<name>[a-z_][a-z_0-9]*)(?:\(\))?")
# A class (or another CamelCase name) the page names on its own: `UpdateStatus`, `BlobReader`.
CAMEL = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[A-Z][a-z0-9]{3,}")
# A function, field or key the page names on its own: `execute_plan`, `installed_version`.
SNAKE = re.compile(r"_?[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?:\(\))?")
# The tree of one update's path: each module in it, spelled without `.py` or with it.
TREE_PATH = re.compile(r"\b[a-z_]+/[a-z_/]+(?:\.[a-z_]+)?")


def _text() -> str:
    return DOCUMENT.read_text(encoding="utf-8")


def _section(title: str) -> str:
    """The body of the page's section (any level) titled ``title``, to the next heading."""
    match = re.search(rf"^#+ {re.escape(title)}\n(.*?)(?=^#+ |\Z)", _text(), re.S | re.M)
    assert match is not None, f"docs/architecture.md has no section {title!r}"
    return match.group(1)


def _cited() -> list[str]:
    """Every backquoted span of the page outside its code block, and every module path in the
    code block."""
    text = _text()
    blocks = re.findall(r"^```\n(.*?)^```", text, re.S | re.M)
    prose = re.sub(r"^```\n.*?^```", "", text, flags=re.S | re.M)
    return re.findall(r"`([^`\n]+)`", prose) + [
        path for block in blocks for path in TREE_PATH.findall(block)
    ]


@functools.cache
def _files() -> dict[str, str]:
    """Each module of the package (``flows/apply.py``) and its text."""
    return {
        path.relative_to(SOURCE).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(SOURCE.rglob("*.py"))
    }


def _top_level_names(tree: ast.Module) -> set[str]:
    """What a module defines or imports at its top level (inside ``if`` and ``try`` too)."""
    names: set[str] = set()
    body = list(tree.body)
    while body:
        node = body.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.If | ast.Try):
            body += node.body + node.orelse + getattr(node, "finalbody", [])
            body += [n for handler in getattr(node, "handlers", []) for n in handler.body]
    return names


def _module_file(module: str) -> str | None:
    """The file of a module the page names: ``flows/update``, ``model.plan``, ``tether``, or
    a module's own name where only one module has it (``interact``)."""
    parts = [part for part in re.split(r"[./]", module) if part]
    if parts[:1] == ["tether"]:
        parts = parts[1:]
    files = _files()
    for candidate in ("/".join([*parts, "__init__.py"]), "/".join(parts) + ".py"):
        if candidate in files:
            return candidate
    if len(parts) == 1:
        named = [where for where in files if where.endswith(f"/{parts[0]}.py")]
        if len(named) == 1:
            return named[0]
    return None


def _is_ours(module: str) -> bool:
    """The first part of a dotted name is one of tether's modules or packages (``os.fork`` and
    ``pyproject.toml`` are not)."""
    first = re.split(r"[./]", module)[0]
    return first == "tether" or first in _stems()


@functools.cache
def _stems() -> set[str]:
    """The names of the package's modules and of its top-level folders."""
    return {Path(where).stem for where in _files()} | {Path(where).parts[0] for where in _files()}


@functools.cache
def _classes() -> dict[str, list[ast.ClassDef]]:
    found: dict[str, list[ast.ClassDef]] = {}
    for text in _files().values():
        for node in syntax_trees.nodes(syntax_trees.parsed(text), ast.ClassDef):
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, []).append(node)
    return found


def _members(cls: ast.ClassDef) -> set[str]:
    names: set[str] = set()
    for node in cls.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


@functools.cache
def _defined_anywhere() -> set[str]:
    return {
        name for text in _files().values() for name in _top_level_names(syntax_trees.parsed(text))
    } | {member for classes in _classes().values() for cls in classes for member in _members(cls)}


@functools.cache
def _words() -> set[str]:
    """Every word of the package and of its tests (the tests' helpers are on the page too)."""
    tests = [path for path in TESTS.rglob("*.py") if path != Path(__file__)]  # not its examples
    texts = [*_files().values(), *(path.read_text() for path in tests)]
    return {word for text in texts for word in re.findall(r"\w+", text)}


def _path_exists(cited: str) -> bool:
    bare = cited.rstrip("/")
    if "/" not in bare:  # a module named on its own (`commands.py`): one of that name exists
        return any(SOURCE.rglob(bare)) or any(TESTS.rglob(bare)) or (ROOT / bare).exists()
    candidates = [SOURCE / bare, ROOT / bare, TESTS / bare, SOURCE / f"{bare}.py"]
    return any(path.exists() for path in candidates)


def unresolved(cited: str) -> str | None:
    """Why a span the page cites names nothing in the code, or None when it names something
    (or is not a reference to the code: a flag, a JSON key, a standard-library name)."""
    if PLACEHOLDER.search(cited):
        return None
    if PATH.fullmatch(cited) and ("/" in cited or cited.endswith(".py")):
        return None if _path_exists(cited) else f"{cited}: no such file or folder"
    if match := MODULE_NAME.fullmatch(cited):
        module, name = match["module"], match["name"]
        if not _is_ours(module) or name in ("md", "toml", "json"):  # `tether.toml`: a file
            return None
        where = _module_file(module)
        if where is None:
            return f"{cited}: no module {module}"
        submodule = where.removesuffix("__init__.py") + f"{name}.py"
        if name in _top_level_names(syntax_trees.parsed(_files()[where])) or submodule in _files():
            return None
        return f"{cited}: {where} defines no {name}"
    if match := CLASS_MEMBER.fullmatch(cited):
        classes = _classes().get(match["cls"], [])
        if not classes:
            return f"{cited}: no class {match['cls']}"
        if any(match["name"] in _members(cls) for cls in classes):
            return None
        return f"{cited}: {match['cls']} has no {match['name']}"
    if CAMEL.fullmatch(cited) and cited not in _defined_anywhere():
        return f"{cited}: defined nowhere in src/tether"
    if SNAKE.fullmatch(cited) and cited.removesuffix("()") not in _words():
        return f"{cited}: named nowhere in tether or its tests"
    return None


def test_every_module_folder_and_name_the_page_cites_exists() -> None:
    assert sorted({why for cited in _cited() if (why := unresolved(cited))}) == []


def test_the_resolver_tells_a_stale_citation() -> None:
    assert unresolved("flows/apply.py") is None
    assert unresolved("engine/structured/") is None
    assert unresolved("flows/update.run_update") is None
    assert unresolved("model.plan.UpdatePlan") is None
    assert unresolved("git.one_command()") is None
    assert unresolved("tether.process") is None
    assert unresolved("interact.ask_yes_no") is None
    assert unresolved("PathGuard.write") is None
    assert unresolved("UpdateStatus") is None
    assert unresolved("os.fork") is None
    assert unresolved("--json") is None
    assert unresolved("flows/regions.py") == "flows/regions.py: no such file or folder"
    assert unresolved("flows/regions_step.plan_regions") == (
        "flows/regions_step.plan_regions: flows/regions_step.py defines no plan_regions"
    )
    assert unresolved("flows/nothing.run") == "flows/nothing.run: no module flows/nothing"
    assert unresolved("PathGuard.scribble") == "PathGuard.scribble: PathGuard has no scribble"
    assert unresolved("UpdateMood") == "UpdateMood: defined nowhere in src/tether"
    assert unresolved("execute_plan") is None
    assert unresolved("execute_plans") == "execute_plans: named nowhere in tether or its tests"


def _layer_table() -> list[tuple[str, list[str]]]:
    """(layer, its units) for each row of the page's table of layers, in order."""
    rows = []
    for line in _section("Layers and the dependency rule").splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if not line.startswith("| ") or len(cells) != 3 or cells[0] in ("layer", "---"):
            continue
        units = [unit.rstrip("/") for unit in re.findall(r"`([^`]+)`", cells[1])]
        rows.append((cells[0], units))
    return rows


def test_the_layer_table_is_the_checkers() -> None:
    """The rows are ``LAYERS`` in order and each names the units ``LAYER_OF`` gives it."""
    table = _layer_table()
    assert [layer for layer, _ in table] == list(LAYERS)
    assert {unit: layer for layer, units in table for unit in units} == LAYER_OF


def test_the_profiles_the_page_names_are_the_profiles() -> None:
    bullet = re.search(r"^- \*\*profile\*\*:(.*?)(?=^- |^#|\Z)", _text(), re.S | re.M)
    assert bullet is not None
    named = set(re.findall(r"`([a-z]+)`", bullet.group(1))) - {"init"}
    assert named == set(PROFILES) | set(TEMPLATE_PROFILES)


def test_every_report_module_is_named_for_what_it_words() -> None:
    """The row "human words" of "Where each concept lives" names each module of report/."""
    row = next(
        line
        for line in _section("Where each concept lives").splitlines()
        if line.startswith("| human words |")
    )
    named = {cited for cited in re.findall(r"`([^`]+)`", row) if re.fullmatch(r"\w+\.py", cited)}
    modules = {path.name for path in (SOURCE / "report").glob("*.py")} - {"__init__.py"}
    assert named == modules


def test_the_test_folders_are_the_pages_table() -> None:
    """Each folder of tests/ is a package with its conftest.py and a row of the page's table;
    the modules every area shares are the ones the page names."""
    section = _section("Tests")
    rows = set(re.findall(r"^\| `(\w+)/` \|", section, re.M))
    areas = {path.parent.name for path in TESTS.glob("*/__init__.py")}
    assert rows == areas
    assert all((TESTS / area / "conftest.py").is_file() for area in areas)
    shared = section.split("What every area shares", 1)[1]
    named = set(re.findall(r"`(\w+\.py)`", shared))
    assert named == {path.name for path in TESTS.glob("*.py")} - {"__init__.py"}


def test_the_process_rule_the_page_states_is_the_checkers() -> None:
    """What the page says starts or signals a process, and which modules may, are the
    checker's lists (``PROCESS_STARTING_*``, ``PROCESS_MODULES``)."""
    rule = _text().split("only the process modules the test lists", 1)[1].split("\n\n", 1)[0]
    starters, allowed = rule.split("):", 1)
    patterns = set(re.findall(r"`([^`]+)`", starters))
    starting = {
        *PROCESS_STARTING_MODULES,
        *(f"os.{call}" for call in PROCESS_STARTING_OS_CALLS),
        *PROCESS_STARTING_ASYNCIO,
    }
    assert {s for s in starting if not any(fnmatch.fnmatchcase(s, p) for p in patterns)} == set()
    assert {p for p in patterns if not fnmatch.filter(starting, p)} == set()
    cited = re.findall(r"`([a-z_/]+(?:\.py)?)`", allowed)
    assert {_module_file(name.removesuffix(".py")) for name in cited} == set(PROCESS_MODULES)


def test_the_modules_the_pure_layers_never_import_are_the_checkers() -> None:
    rule = _text().split("Below the edge nothing does I/O", 1)[1].split(";", 1)[0]
    assert set(re.findall(r"`(\w+)`", rule)) == SIDE_EFFECT_MODULES
