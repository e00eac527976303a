"""The dependency rule of docs/architecture.md, read from the source with ``ast`` so it cannot
rot: every import inside ``src/tether`` (function-local imports included; imports under
``if TYPE_CHECKING:`` name types only and are not dependencies) must go from a layer to one
the rule allows, and no modules may import each other (counting the same imports). A new
top-level module or package fails here until it is given a layer in both this table and the
document."""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable, Collection
from pathlib import Path

import pytest

from tests.architecture import syntax_trees

pytestmark = pytest.mark.usefixtures("reading_syntax_trees")

SOURCE = Path(__file__).resolve().parents[2] / "src" / "tether"

# Each unit of the package (a top-level module or a sub-package) and the layer it belongs to.
LAYER_OF: dict[str, str] = {
    "errors": "foundation",
    "parselimits": "foundation",
    "pathrules": "foundation",
    "versions": "foundation",
    "progress": "foundation",
    "valueclass": "foundation",
    "fsio": "edge",
    "checksums": "edge",
    "git": "edge",
    "gh": "edge",
    "process": "edge",
    "syntax_child": "edge",
    "pattern_child": "edge",
    "model": "model",
    "engine": "engine",
    "profiles": "profiles",
    "state": "store",
    "sources": "store",
    "templates": "store",
    "flows": "flows",
    "publish": "flows",
    "audit": "flows",
    "demo": "flows",
    "runs": "runs",
    "fleet": "multi",
    "deps": "multi",
    "campaign": "multi",
    "report": "report",
    "cli": "cli",
    "__main__": "cli",
    "__init__": "foundation",
}

# The layers from the bottom up: a layer may import itself and every layer below it, so two
# layers can never import each other. Below the edge nothing does I/O (``PURE_LAYERS``).
LAYERS = (
    "foundation",
    "model",
    "engine",
    "edge",
    "profiles",
    "store",
    "flows",
    "report",
    "runs",
    "multi",
    "cli",
)
# The layers whose modules touch the disk, the network or other programs themselves.
SIDE_EFFECT_LAYERS = {"edge", "store"}
# report/ renders what the layers below it computed: it reaches no side effect itself, even
# though flows/ (whose report objects it renders) sits below it.
RENDERING_LAYERS = {"report"}


def may_import(layer: str) -> set[str]:
    below = set(LAYERS[: LAYERS.index(layer)])
    return below - SIDE_EFFECT_LAYERS if layer in RENDERING_LAYERS else below


MAY_IMPORT: dict[str, set[str]] = {layer: may_import(layer) for layer in LAYERS}

# Standard-library modules that do I/O or start programs: the pure layers (every layer below
# the edge) never import them.
SIDE_EFFECT_MODULES = {"os", "subprocess", "shutil", "pathlib", "socket", "tempfile", "signal"}
PURE_LAYERS = set(LAYERS[: LAYERS.index("edge")])
# Foundations that name environment limits read os.environ once; nothing else in them does I/O.
PURE_EXCEPTIONS = {("parselimits", "os"), ("progress", "os"), ("__init__", "os")}


# Starting a program, or stopping a process group, happens in the process edge
# (``tether.process``: one rule for environment, timeouts, group kill and output) and in the
# modules listed here, each with its reason. Everything else calls ``tether.process``.
PROCESS_MODULES: dict[str, str] = {
    "process.py": "the process edge",
    "git.py": (
        "every git call: thousands of short calls and a long-lived `cat-file --batch`, in "
        "the terminal's session (ssh may ask it for a passphrase), with no deadline, in "
        "git's environment built on `process.child_env`"
    ),
    "campaign/executors.py": (
        "a pool of worker processes running tether's own code (multiprocessing, Dask), "
        "not a program; its workers stop through `process.kill_group`"
    ),
}
# Modules that start processes, and the `os` functions that start or signal them.
PROCESS_STARTING_MODULES = {"subprocess", "multiprocessing", "pty", "concurrent.futures.process"}
# asyncio's way to start a program, however its function is reached.
PROCESS_STARTING_ASYNCIO = {"create_subprocess_exec", "create_subprocess_shell"}
PROCESS_STARTING_OS_CALLS = {
    "fork",
    "forkpty",
    "system",
    "popen",
    "killpg",
    "posix_spawn",
    "posix_spawnp",
    *(f"exec{suffix}" for suffix in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
    *(f"spawn{suffix}" for suffix in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
}


def _process_starts(tree: ast.AST) -> list[tuple[int, str]]:
    """Where a module starts or signals processes: an import of a module that starts them
    (not under ``if TYPE_CHECKING:``, which names types only) or a call of an ``os``
    function that does (``os.fork()``, ``from os import execv``)."""
    found: list[tuple[int, str]] = []
    type_only = _type_only_nodes(tree)
    for node in syntax_trees.nodes(tree, ast.Import, ast.ImportFrom, ast.Attribute):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            found.extend(
                (node.lineno, f"import {alias.name}")
                for alias in node.names
                if alias.name.split(".")[0] in PROCESS_STARTING_MODULES
                or alias.name in PROCESS_STARTING_MODULES
            )
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module.split(".")[0] in PROCESS_STARTING_MODULES or node.module in (
                PROCESS_STARTING_MODULES
            ):
                found.append((node.lineno, f"from {node.module} import"))
            elif node.module == "os":
                found.extend(
                    (node.lineno, f"from os import {alias.name}")
                    for alias in node.names
                    if alias.name in PROCESS_STARTING_OS_CALLS
                )
            elif node.module.split(".")[0] == "asyncio":
                found.extend(
                    (node.lineno, f"from {node.module} import {alias.name}")
                    for alias in node.names
                    if alias.name in PROCESS_STARTING_ASYNCIO
                )
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
            and node.attr in PROCESS_STARTING_OS_CALLS
        ):
            found.append((node.lineno, f"os.{node.attr}"))
        elif isinstance(node, ast.Attribute) and node.attr in PROCESS_STARTING_ASYNCIO:
            found.append((node.lineno, f"{ast.unparse(node)}"))
    return found


def _unit(path: Path) -> str:
    parts = path.relative_to(SOURCE).parts
    return parts[0].removesuffix(".py")


def _unit_named(name: str) -> str:
    """``from tether import x``: x is a module or package, or a name the package itself defines."""
    is_module = (SOURCE / name).is_dir() or (SOURCE / f"{name}.py").is_file()
    return name if is_module else "__init__"


def _is_type_checking(test: ast.expr) -> bool:
    """The condition is ``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``."""
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return (
        isinstance(test, ast.Attribute)
        and test.attr == "TYPE_CHECKING"
        and isinstance(test.value, ast.Name)
        and test.value.id == "typing"
    )


@syntax_trees.of_each_tree
def _type_only_nodes(tree: ast.AST) -> frozenset[int]:
    """ids of the nodes inside ``if TYPE_CHECKING:`` blocks (several rules ask, once each)."""
    inside: set[int] = set()
    for node in syntax_trees.nodes(tree, ast.If):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                inside.update(id(n) for n in ast.walk(child))
    return frozenset(inside)


def _imported_units(tree: ast.AST, module_path: Path) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    type_only = _type_only_nodes(tree)
    for node in syntax_trees.nodes(tree, ast.Import, ast.ImportFrom):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "tether" and len(parts) > 1:
                    found.append((node.lineno, parts[1]))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise AssertionError(f"{module_path}: relative import; spell it tether.…")
            parts = (node.module or "").split(".")
            if parts[0] != "tether":
                continue
            if len(parts) > 1:
                found.append((node.lineno, parts[1]))
            else:
                found.extend((node.lineno, _unit_named(alias.name)) for alias in node.names)
    return found


def _stdlib_imports(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in syntax_trees.nodes(tree, ast.Import, ast.ImportFrom):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name.split(".")[0]) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


def _modules() -> list[Path]:
    return sorted(SOURCE.rglob("*.py"))


def _parsed(text: str) -> ast.Module:
    """The syntax tree of a module's text, made once per test process: parsing the whole
    package is most of what each rule below costs, and several rules read every module."""
    return syntax_trees.parsed(text)


def _module_files() -> dict[str, str]:
    """Each module's file under src/tether (``flows/apply.py``) and its text."""
    return {path.relative_to(SOURCE).as_posix(): path.read_text() for path in _modules()}


def _module_file(name: str, files: Collection[str]) -> str | None:
    """The file of module ``tether.a.b`` (``a/b.py`` or ``a/b/__init__.py``), if it is one."""
    parts = name.split(".")[1:]
    for candidate in ("/".join([*parts, "__init__.py"]), "/".join(parts) + ".py"):
        if candidate in files:
            return candidate
    return None


def _module_imports(tree: ast.AST, files: Collection[str]) -> dict[str, int]:
    """The modules of the package a module imports (file -> first line), wherever the import
    stands (a function's body too) except under ``if TYPE_CHECKING:``. ``import tether.a.b``
    and ``from tether.a.b import name`` import ``a/b``; ``from tether.a import b`` imports
    ``a/b`` when that is a module, else the package ``a`` itself (its ``__init__``). The
    packages Python initialises on the way (``a`` for ``a.b``) are not counted."""
    found: dict[str, int] = {}
    type_only = _type_only_nodes(tree)
    for node in syntax_trees.nodes(tree, ast.Import, ast.ImportFrom):
        if id(node) in type_only:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                is_module = _module_file(submodule, files) is not None
                names.append(submodule if is_module else node.module)
        for name in names:
            if name.split(".")[0] != "tether":
                continue
            target = _module_file(name, files)
            if target is not None:
                found.setdefault(target, node.lineno)
    return found


def _import_graph(files: dict[str, str]) -> dict[str, dict[str, int]]:
    graph = {where: _module_imports(_parsed(text), files) for where, text in files.items()}
    for where, imported in graph.items():
        imported.pop(where, None)
    return graph


def _cycles(graph: dict[str, dict[str, int]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm):
    the groups of modules each of which imports, directly or not, every other."""
    index: dict[str, int] = {}
    lowest: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(module: str) -> None:
        index[module] = lowest[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.get(module, {}):
            if imported not in index:
                visit(imported)
                lowest[module] = min(lowest[module], lowest[imported])
            elif imported in on_stack:
                lowest[module] = min(lowest[module], index[imported])
        if lowest[module] == index[module]:
            component: set[str] = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(component)

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def _cycle_lines(graph: dict[str, dict[str, int]], cycle: Collection[str]) -> list[str]:
    return [
        f"{module}:{line} imports {imported}"
        for module in sorted(cycle)
        for imported, line in sorted(graph[module].items())
        if imported in cycle
    ]


def test_every_unit_has_a_layer() -> None:
    units = {_unit(path) for path in _modules()}
    assert units - set(LAYER_OF) == set(), "give new modules a layer here and in the document"
    assert set(LAYER_OF) - units == set(), "a layer names a module that no longer exists"


def test_imports_follow_the_dependency_rule() -> None:
    broken: list[str] = []
    for path in _modules():
        unit = _unit(path)
        layer = LAYER_OF[unit]
        for line, target in _imported_units(_parsed(path.read_text()), path):
            target_layer = LAYER_OF.get(target, "unknown")
            where = path.relative_to(SOURCE)
            if target_layer != layer and target_layer not in MAY_IMPORT[layer]:
                broken.append(f"{where}:{line}: {layer} ({unit}) imports {target_layer} ({target})")
    assert broken == []


def test_pure_layers_import_nothing_that_does_io() -> None:
    broken: list[str] = []
    for path in _modules():
        unit = _unit(path)
        if LAYER_OF[unit] not in PURE_LAYERS:
            continue
        for line, name in _stdlib_imports(_parsed(path.read_text())):
            if name in SIDE_EFFECT_MODULES and (unit, name) not in PURE_EXCEPTIONS:
                broken.append(f"{path.relative_to(SOURCE)}:{line}: imports {name}")
    assert broken == []


def test_only_the_process_edges_start_programs() -> None:
    broken: list[str] = []
    for path in _modules():
        where = path.relative_to(SOURCE).as_posix()
        if where in PROCESS_MODULES:
            continue
        for line, what in _process_starts(_parsed(path.read_text())):
            broken.append(f"{where}:{line}: {what} (run programs through tether.process)")
    assert broken == []
    listed = {where for where in PROCESS_MODULES if not (SOURCE / where).is_file()}
    assert listed == set(), "a listed process module no longer exists"
    assert all(LAYER_OF[_unit(SOURCE / where)] in {"edge", "multi"} for where in PROCESS_MODULES)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import subprocess\n", ["import subprocess"]),
        ("from subprocess import run\n", ["from subprocess import"]),
        ("import multiprocessing\n", ["import multiprocessing"]),
        ("from concurrent.futures.process import BrokenProcessPool\n", ["from concurrent"]),
        ("import os\nos.execvp('x', ['x'])\n", ["os.execvp"]),
        ("import os\npid = os.fork()\n", ["os.fork"]),
        ("import os\nos.killpg(1, 9)\n", ["os.killpg"]),
        ("from os import posix_spawn\n", ["from os import posix_spawn"]),
        (
            "import asyncio\nasyncio.create_subprocess_exec('x')\n",
            ["asyncio.create_subprocess_exec"],
        ),
        ("from asyncio import create_subprocess_shell\n", ["from asyncio import create_sub"]),
        ("import asyncio\nasyncio.run(main())\n", []),
        ("import os\nos.kill(1, 0)\n", []),
        ("from concurrent.futures import ThreadPoolExecutor\n", []),
        ("if TYPE_CHECKING:\n    import subprocess\n", []),
    ],
)
def test_the_process_rule_sees_each_spelling(source: str, expected: list[str]) -> None:
    found = [what for _, what in _process_starts(ast.parse(source))]
    assert [f[: len(e)] for f, e in zip(found, expected, strict=False)] == expected
    assert len(found) == len(expected)


# The one module that opens a network connection (docs/architecture.md, "bounds on network
# reads"): every HTTP read of tether's own goes through its bounds.
NETWORK_MODULE = "sources/web.py"
NETWORK_OPENERS = {
    "urlopen",
    "build_opener",
    "OpenerDirector",
    "HTTPConnection",
    "HTTPSConnection",
    "create_connection",
}
NETWORK_MODULES = {"socket", "ssl", "ftplib", "smtplib", "telnetlib", "xmlrpc"}


def _connects(tree: ast.AST) -> list[tuple[int, str]]:
    """Where a module opens a connection itself: a standard-library opener named in any
    spelling (``urllib.request.urlopen``, ``from http.client import HTTPSConnection``) or a
    module that speaks to the network directly (``socket``)."""
    found: list[tuple[int, str]] = []
    type_only = _type_only_nodes(tree)
    for node in syntax_trees.nodes(tree, ast.Attribute, ast.Import, ast.ImportFrom):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Attribute) and node.attr in NETWORK_OPENERS:
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Import):
            found += [
                (node.lineno, f"import {alias.name}")
                for alias in node.names
                if alias.name.split(".")[0] in NETWORK_MODULES
            ]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module.split(".")[0] in NETWORK_MODULES:
                found.append((node.lineno, f"from {node.module} import"))
            found += [
                (node.lineno, f"from {node.module} import {alias.name}")
                for alias in node.names
                if alias.name in NETWORK_OPENERS
            ]
    return found


def _found_outside(module: str, finder: Callable[[ast.AST], list[tuple[int, str]]]) -> list[str]:
    """What ``finder`` sees in every module of the package but ``module``, the one allowed."""
    return [
        f"{where}:{line}: {what}"
        for where, text in _module_files().items()
        if where != module
        for line, what in finder(_parsed(text))
    ]


def test_only_the_bounded_reader_opens_a_connection() -> None:
    """Every HTTP read tether makes itself (release sources, registries, GitHub's API) goes
    through ``sources/web.py``, bounded in time and bytes; git and gh reach the network as
    programs, through their own edges."""
    assert _found_outside(NETWORK_MODULE, _connects) == []
    assert _connects(_parsed((SOURCE / NETWORK_MODULE).read_text())), "the reader moved"


@pytest.mark.parametrize(
    ("source", "connects"),
    [
        ("urllib.request.urlopen(url)\n", True),
        ("from urllib.request import urlopen\n", True),
        ("from http.client import HTTPSConnection\n", True),
        ("http.client.HTTPConnection(host)\n", True),
        ("import socket\n", True),
        ("from socket import create_connection\n", True),
        ("request = urllib.request.Request(url)\n", False),
        ("import http.client\n", False),
        ("if TYPE_CHECKING:\n    import socket\n", False),
    ],
)
def test_the_network_rule_sees_each_spelling(source: str, connects: bool) -> None:
    assert bool(_connects(ast.parse(source))) is connects


# The one module that asks a person something (docs/architecture.md, "consent and prompts").
ASKING_MODULE = "cli/interact.py"


def _asks(tree: ast.AST) -> list[tuple[int, str]]:
    """Where a module reads an answer typed on the terminal: ``input()``, ``getpass``, or a
    line of ``sys.stdin`` (a child reading its payload with ``sys.stdin.buffer.read()``, or
    a command reading a list given on stdin with ``read()``, asks nobody)."""
    found: list[tuple[int, str]] = []
    for node in syntax_trees.nodes(tree, ast.Call, ast.Import, ast.ImportFrom, ast.Attribute):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "input"
        ):
            found.append((node.lineno, "input()"))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            modules = [alias.name for alias in node.names] + [getattr(node, "module", "") or ""]
            if "getpass" in modules:
                found.append((node.lineno, "getpass"))
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in ("readline", "readlines")
            and ast.unparse(node.value) in ("sys.stdin", "stdin")
        ):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_only_cli_interact_asks_a_person() -> None:
    """Prompts live in ``cli/interact.py``; the library is given its questions as callbacks."""
    assert _found_outside(ASKING_MODULE, _asks) == []
    assert _asks(_parsed((SOURCE / ASKING_MODULE).read_text())), "the module that asks moved"


@pytest.mark.parametrize(
    ("source", "asks"),
    [
        ("answer = input('name? ')\n", True),
        ("import getpass\n", True),
        ("from getpass import getpass\n", True),
        ("line = sys.stdin.readline()\n", True),
        ("from sys import stdin\nline = stdin.readline()\n", True),
        ("payload = sys.stdin.buffer.read()\n", False),
        ("names = sys.stdin.read()\n", False),
        ("header = stdout.readline()\n", False),
    ],
)
def test_the_asking_rule_sees_each_spelling(source: str, asks: bool) -> None:
    assert bool(_asks(ast.parse(source))) is asks


@pytest.mark.parametrize(
    ("source", "layer", "expected"),
    [
        ("from tether.flows.update import run_update\n", "engine", ["flows"]),
        ("import tether.cli.main\n", "report", ["cli"]),
        ("from tether import git\n", "engine", ["edge"]),
        ("from tether import __version__\n", "engine", []),
        ("def f():\n    from tether.report import update\n", "flows", ["report"]),
        ("from tether.model.plan import UpdatePlan\n", "engine", []),
        (
            "if TYPE_CHECKING:\n    from tether.flows.update_report import UpdateReport\n",
            "report",
            [],
        ),
        ("if TYPE_CHECKING:\n    from tether.fleet.runner import FleetRun\n", "engine", []),
        ("from tether.fleet.runner import FleetRun\n", "report", ["multi"]),
    ],
)
def test_the_checker_sees_each_import_spelling(
    source: str, layer: str, expected: list[str]
) -> None:
    imported = _imported_units(ast.parse(source), Path("example.py"))
    refused = [
        LAYER_OF[target]
        for _, target in imported
        if LAYER_OF[target] != layer and LAYER_OF[target] not in MAY_IMPORT[layer]
    ]
    assert refused == expected


def test_no_module_imports_itself_through_others() -> None:
    """No group of modules imports each other, counting the imports inside functions: a
    function-local import defers loading a module, it never hides a cycle (see
    docs/architecture.md, "Import cycles")."""
    graph = _import_graph(_module_files())
    found = [line for cycle in _cycles(graph) for line in _cycle_lines(graph, cycle)]
    assert found == [], "modules that import each other, directly or through others"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # A function-local import closes the cycle.
        (
            {
                "a.py": "from tether.b import x\n",
                "b.py": "def f():\n    from tether.a import y\n",
            },
            [{"a.py", "b.py"}],
        ),
        # A package and its submodule: the package imports it lazily, it reads the package.
        (
            {
                "p/__init__.py": "def open():\n    from tether.p.kind import Kind\n",
                "p/kind.py": "from tether.p import SHARED\n",
            },
            [{"p/__init__.py", "p/kind.py"}],
        ),
        # ``from tether.p import kind`` names the submodule, not the package's own names.
        (
            {
                "p/__init__.py": "def open():\n    from tether.p.kind import Kind\n",
                "p/kind.py": "from tether.p import base\n",
                "p/base.py": "X = 1\n",
            },
            [],
        ),
        # Three modules around, one import each, spelled as a module import.
        (
            {
                "a.py": "import tether.b\n",
                "b.py": "from tether import c\n",
                "c.py": "def f():\n    import tether.a\n",
            },
            [{"a.py", "b.py", "c.py"}],
        ),
        # Types named for annotations only are not imports.
        (
            {
                "a.py": "from tether.b import x\n",
                "b.py": "if TYPE_CHECKING:\n    from tether.a import Y\n",
            },
            [],
        ),
    ],
)
def test_the_cycle_check_sees_each_spelling(
    files: dict[str, str], expected: list[set[str]]
) -> None:
    assert sorted(map(sorted, _cycles(_import_graph(files)))) == sorted(map(sorted, expected))


def _defined_names(tree: ast.Module) -> list[tuple[int, str]]:
    """The names a module defines at its top level (functions, classes, assignments)."""
    found: list[tuple[int, str]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.append((node.lineno, node.name))
        elif isinstance(node, ast.Assign):
            found.extend((node.lineno, t.id) for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.append((node.lineno, node.target.id))
    return [(line, name) for line, name in found if not name.startswith("__")]


def test_every_name_a_module_defines_is_used() -> None:
    """A function, class or constant nothing in the package names (or pyproject.toml, for
    the entry points) is dead: removed, or used where a literal re-spells it. A name only
    tests or benches use is dead too: they would be testing code no command runs."""
    root = SOURCE.parents[1]
    texts = [path.read_text() for path in _modules()]
    texts.append((root / "pyproject.toml").read_text())
    words = Counter(word for text in texts for word in re.findall(r"\w+", text))
    unused = [
        f"{path.relative_to(SOURCE)}:{line}: {name}"
        for path in _modules()
        for line, name in _defined_names(_parsed(path.read_text()))
        if words[name] <= 1
    ]
    assert unused == []


def _import_targets(node: ast.ImportFrom, files: Collection[str]) -> set[str | None]:
    """The module files ``from tether.a import x, y`` loads: ``a/x`` when x is a module,
    else ``a`` itself."""
    module = node.module or ""
    return {
        _module_file(f"{module}.{alias.name}", files) or _module_file(module, files)
        for alias in node.names
    }


def _deferred_for_nothing(tree: ast.Module, files: Collection[str]) -> list[str]:
    """Function-local ``from tether… import`` statements whose modules the file already
    imports at its top: they put nothing off."""
    at_top: set[str | None] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tether"):
            at_top |= _import_targets(node, files)
        elif isinstance(node, ast.Import):
            at_top |= {
                _module_file(alias.name, files)
                for alias in node.names
                if alias.name.split(".")[0] == "tether"
            }
    # A function holds an import only if one stands among its lines: the others are not
    # walked (most functions of the package hold none).
    import_lines = {
        node.lineno
        for node in syntax_trees.nodes(tree, ast.Import, ast.ImportFrom)
        if isinstance(node, ast.Import | ast.ImportFrom)
    }
    found = []
    for function in syntax_trees.nodes(tree, ast.FunctionDef, ast.AsyncFunctionDef):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        end = function.end_lineno or function.lineno
        if not any(function.lineno <= line <= end for line in import_lines):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tether"):
                targets = _import_targets(node, files)
                if None not in targets and targets <= at_top:
                    found.append(f"{node.lineno}: from {node.module} import …")
            elif isinstance(node, ast.Import):
                found += [
                    f"{node.lineno}: import {alias.name}"
                    for alias in node.names
                    if alias.name.split(".")[0] == "tether"
                    and _module_file(alias.name, files) in at_top - {None}
                ]
    return found


def test_an_import_inside_a_function_puts_something_off() -> None:
    """Outside ``cli/`` an import stands inside a function only to put off loading a module
    (docs/architecture.md, "Import cycles"); one the file imports at its top already is
    loaded anyway, so its names are imported there."""
    files = _module_files()
    found = [
        f"{where}:{line}"
        for where, text in files.items()
        if not where.startswith("cli/")
        for line in _deferred_for_nothing(_parsed(text), files)
    ]
    assert found == []


def test_the_deferral_check_sees_a_module_already_loaded() -> None:
    files = {"a.py": "", "p/__init__.py": "", "p/b.py": ""}
    top = "from tether.a import x\nfrom tether.p import b\n"
    assert _deferred_for_nothing(ast.parse(top + "def f():\n    from tether.a import y\n"), files)
    assert _deferred_for_nothing(ast.parse(top + "def f():\n    from tether.p.b import z\n"), files)
    assert _deferred_for_nothing(ast.parse(top + "def f():\n    import tether.p.b\n"), files)
    assert not _deferred_for_nothing(ast.parse("def f():\n    import tether.p.b\n"), files)
    assert not _deferred_for_nothing(ast.parse("def f():\n    from tether.a import y\n"), files)
    assert not _deferred_for_nothing(
        ast.parse("import os\ndef f():\n    from tether import __version__\n"),
        files | {"__init__.py": ""},
    )
    assert not _deferred_for_nothing(
        ast.parse("from tether.p import b\ndef f():\n    from tether.p import c\n"), files
    )


# --- notes: facts in the flows, words in report/ ------------------------------------------


def _words(node: ast.AST) -> bool:
    """The expression is words: a string, an f-string, one built of them, or a collection of
    them (a call, such as a fact's constructor, is data whatever its arguments)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _words(node.left) or _words(node.right)
    if isinstance(node, ast.IfExp):
        return _words(node.body) or _words(node.orelse)
    if isinstance(node, ast.BoolOp):
        return any(_words(value) for value in node.values)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return any(_words(element) for element in node.elts)
    if isinstance(node, ast.Starred):
        return _words(node.value)
    if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp):
        return _words(node.elt)
    return False


def _is_notes(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "notes") or (
        isinstance(node, ast.Attribute) and node.attr == "notes"
    )


def _worded_notes(tree: ast.AST) -> list[int]:
    """The lines that put words into a ``notes`` list: appended, extended, inserted, added,
    assigned, or given as a ``notes=`` argument."""
    lines = []
    for node in syntax_trees.nodes(tree, ast.Call, ast.Assign, ast.AugAssign, ast.AnnAssign):
        values: list[ast.AST] = []
        if isinstance(node, ast.Call):
            func = node.func
            adds = isinstance(func, ast.Attribute) and func.attr in ("append", "extend", "insert")
            if adds and isinstance(func, ast.Attribute) and _is_notes(func.value):
                values += node.args
            values += [kw.value for kw in node.keywords if kw.arg == "notes"]
        elif isinstance(node, ast.Assign) and any(_is_notes(t) for t in node.targets):
            values.append(node.value)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign) and _is_notes(node.target):
            values += [node.value] if node.value is not None else []
        if any(_words(value) for value in values):
            lines.append(node.lineno)
    return sorted(set(lines))


def test_the_flows_attach_notes_as_facts() -> None:
    """A note a flow attaches (``notes`` of a release, a baseline, a plan or a report) is a
    fact of ``flows/notes.py`` or the flow's own, worded in ``report/``: never a sentence
    built where it is found (docs/architecture.md). A note built in a helper and returned
    is not seen here."""
    broken = []
    for path in _modules():
        if LAYER_OF[_unit(path)] != "flows":
            continue
        for line in _worded_notes(_parsed(path.read_text())):
            broken.append(f"{path.relative_to(SOURCE).as_posix()}:{line}")
    assert broken == [], "words built in a flow: make them a fact worded in report/"


@pytest.mark.parametrize(
    ("source", "worded"),
    [
        ("report.notes.append(f'{rel}: not read')\n", True),
        ("notes.append('a ' + why)\n", True),
        ("notes.append(said or 'nothing said')\n", True),
        ("plan.notes += [f'migration {i} ran' for i in ids]\n", True),
        ("baseline.notes.extend(('said',))\n", True),
        ("report.notes = [*release.notes, f'adopted {path}']\n", True),
        ("Release(v, root, notes=(f'hooks {h} not run',))\n", True),
        ("notes: list[str] = ['x']\n", True),
        ("report.notes.append(NotRead(rel, problem))\n", False),
        ("baseline.notes += source.notes\n", False),
        ("report.notes = [*release.notes, Adopted(path, f'{n}')]\n", False),
        ("reasons.append(f'{rel}: not read')\n", False),
    ],
)
def test_the_notes_rule_sees_each_spelling(source: str, worded: bool) -> None:
    assert bool(_worded_notes(ast.parse(source))) is worded


# Where a plan's row takes its reason: ``FileAction(...)`` (by name, or its ninth argument)
# and ``replace(action, ...)``; a migration's result likewise (``migration_result``,
# ``MigrationResult``: its fact is a ``ProgramWhy``, worded by ``report/lifecycle_steps``).
_ROW_BUILDERS = ("FileAction", "replace", "migration_result", "MigrationResult")
_REASON_POSITION = 8


def _worded_reasons(tree: ast.AST) -> list[int]:
    """The lines that give a plan's row a reason in words (an empty one is none): a fact
    of the row (``model.plan.RowWhy``) is worded in ``report/reasons.py``."""
    lines = []
    for node in syntax_trees.nodes(tree, ast.Call):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name not in _ROW_BUILDERS:
            continue
        values = [kw.value for kw in node.keywords if kw.arg == "reason"]
        if name == "FileAction" and len(node.args) > _REASON_POSITION:
            values.append(node.args[_REASON_POSITION])
        if any(_words(v) and not (isinstance(v, ast.Constant) and v.value == "") for v in values):
            lines.append(node.lineno)
    return sorted(set(lines))


def test_the_flows_give_a_rows_reason_as_a_fact() -> None:
    """Why a plan's row is what it is, where a flow decides it, is a fact on the row
    (``FileAction.why``) worded by ``report/reasons.row_reason``: never a sentence built
    where it is found (docs/architecture.md). The decision table's row, a code or a
    failure's message given by name stay in ``reason``; words built in a helper and passed
    by name are not seen here."""
    broken = []
    for path in _modules():
        if LAYER_OF[_unit(path)] != "flows":
            continue
        for line in _worded_reasons(_parsed(path.read_text())):
            broken.append(f"{path.relative_to(SOURCE).as_posix()}:{line}")
    assert broken == [], "a row's reason worded in a flow: make it a RowWhy worded in report/"


@pytest.mark.parametrize(
    ("source", "worded"),
    [
        ("FileAction(rel, cls, Bucket.SKIP, reason='binary file')\n", True),
        ("FileAction(rel, cls, b, reason=f'removed upstream in {v}')\n", True),
        ("model.FileAction(rel, cls, b, reason='a' + why)\n", True),
        ("FileAction(rel, cls, b, op, None, 0, None, None, 'in sync')\n", True),
        ("replace(action, reason=note or 'binary file')\n", True),
        ("replace(action, reason='modified' if edited else '')\n", True),
        ("replace(action, reason='', why=None)\n", False),
        ("FileAction(rel, cls, b, reason=row.value)\n", False),
        ("FileAction(rel, cls, b, reason=str(problem))\n", False),
        ("FileAction(rel, cls, b, why=RowWhy(RowCode.HELD, f'{v}'))\n", False),
        ("Outcome(rel, reason='not run')\n", False),
        ("migration_result(m, 'skipped', reason=f'does not ship {m.operand}')\n", True),
        ("migration_result(m, 'refused', why=ProgramWhy(ProgramCode.NOT_A_FILE))\n", False),
        ("migration_result(m, 'skipped', reason=self.skipped_by)\n", False),
    ],
)
def test_the_row_reason_rule_sees_each_spelling(source: str, worded: bool) -> None:
    assert bool(_worded_reasons(ast.parse(source))) is worded


# --- how a program ended: the process edge's fact, worded in report/ -----------------------

# The modules that word a program's end with ``process.Finished.end_words``: each sits
# below report/, so it cannot import ``report/programs.py``, which words it for every other
# (docs/architecture.md, "Differences" lists each and why).
END_WORDED_BELOW_REPORT = {
    "git.py",
    "gh.py",
    "templates/copier_child.py",
    "flows/regen.py",
    "audit/shellcheck.py",
    "audit/shellast.py",
}
# The names a module gives what ``process.run`` returned, whose words were once its own.
DOCUMENT = SOURCE.parents[1] / "docs" / "architecture.md"
_RUN_NAMES = {"finished", "ran", "run", "result"}


def _words_a_program_end(tree: ast.AST) -> list[tuple[int, str]]:
    """Where a module words how a program ended itself: ``.end_words()`` of anything, or
    ``.describe()``/``.failure(…)`` of a program's result (the words ``Finished`` once had)."""
    found = []
    for node in syntax_trees.nodes(tree, ast.Call):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        method, receiver = node.func.attr, node.func.value
        of_a_run = isinstance(receiver, ast.Name) and receiver.id in _RUN_NAMES
        if method == "end_words" or (method in ("describe", "failure") and of_a_run):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_a_programs_end_is_worded_in_report() -> None:
    """``process.Finished`` is the fact of how a program ended; ``report/programs.py``
    words it. Only a module below report/ words it where it is (``end_words``)."""
    from tether.process import Finished

    worded = sorted(
        name
        for name, value in vars(Finished).items()
        if callable(value)
        and not name.startswith("__")
        and getattr(value, "__annotations__", {}).get("return") == "str"
    )
    assert worded == ["end_words"], "a Finished words itself: word it in report/programs.py"
    broken = [
        f"{where}:{line}: {what}"
        for where, text in _module_files().items()
        if where not in END_WORDED_BELOW_REPORT
        for line, what in _words_a_program_end(_parsed(text))
    ]
    assert broken == [], "a program's end worded outside report/: use report/programs.py"
    below = LAYERS[: LAYERS.index("report")]
    above = [m for m in END_WORDED_BELOW_REPORT if LAYER_OF[_unit(SOURCE / m)] not in below]
    assert above == [], "a module that can import report/programs.py words a program's end"
    differences = DOCUMENT.read_text().split("## Differences from the starting design")[1]
    assert [m for m in sorted(END_WORDED_BELOW_REPORT) if f"`{m}`" not in differences] == []


@pytest.mark.parametrize(
    ("source", "worded"),
    [
        ("log_line(log, f'{argv[0]}: {finished.describe()}')\n", True),
        ("return finished.failure(command)\n", True),
        ("raise TetherError(f'git {args[0]}: {ran.end_words()}')\n", True),
        ("why = self.outcome.end_words()\n", True),
        ("return program_failure(finished, command)\n", False),
        ("registries = {e: source.describe() for e, source in found}\n", False),
        ("return f'not ({self.negated.describe()})'\n", False),
    ],
)
def test_the_program_end_rule_sees_each_spelling(source: str, worded: bool) -> None:
    assert bool(_words_a_program_end(ast.parse(source))) is worded


# --- the multi-project layers: words from report/ ------------------------------------------

# The layers above report/, which import it: what they write to a project's log and the
# ``error`` they give a result are worded there.
WORDED_IN_REPORT_LAYERS = ("runs", "multi")


# What fails a campaign repository's record with a reason: ``record.failed(reason)``,
# ``failed_record(record, reason)``, ``_failed(record, reason)``.
_FAILING = ("failed", "failed_record", "_failed")


def _words_given(tree: ast.AST) -> list[tuple[int, str]]:
    """Words given to a project's log (``log_line(log, …)``), to a result's ``error``
    (``x.error = …``, ``error=…``), to a failed record's reason or to the reason ``deps``
    leaves a declaration alone (``Skipped``)."""
    found = []
    for node in syntax_trees.nodes(tree, ast.Call, ast.Assign):
        values: list[ast.AST] = []
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            values += node.args[1:] if name == "log_line" else []
            values += node.args if name in _FAILING else []
            if name == "Skipped":  # a declaration deps leaves alone: its reason, 6th
                values += node.args[5:6] + [kw.value for kw in node.keywords if kw.arg == "reason"]
            values += [kw.value for kw in node.keywords if kw.arg == "error"]
        elif isinstance(node, ast.Assign):
            named = [t for t in node.targets if isinstance(t, ast.Attribute) and t.attr == "error"]
            values += [node.value] if named else []
        if any(_words(v) and not (isinstance(v, ast.Constant) and v.value == "") for v in values):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_multi_project_layers_take_their_words_from_report() -> None:
    """``deps apply``'s project log, the ``error`` of a result in ``runs/``, ``fleet/``,
    ``deps/`` and ``campaign/`` and why a campaign's repository failed are worded in
    report/ (docs/architecture.md)."""
    broken = [
        f"{path.relative_to(SOURCE).as_posix()}:{line}: {what}"
        for path in _modules()
        if LAYER_OF[_unit(path)] in WORDED_IN_REPORT_LAYERS
        for line, what in _words_given(_parsed(path.read_text()))
    ]
    assert broken == [], "words built above report/: word them in report/"


@pytest.mark.parametrize(
    ("source", "worded"),
    [
        ("log_line(log, f'== {step}: {command}')\n", True),
        ("log_line(log, '== edit')\n", True),
        ("scan.error = 'no package.json'\n", True),
        ("result.error = f'{PENDING} ({result.error})'\n", True),
        ("return Answer(error=f'no registry configured for {ecosystem}')\n", True),
        ("log_line(log, step_log_line(step, command))\n", False),
        ("log_line(log, EDIT_SECTION)\n", False),
        ("result.error = install_pending(result.error)\n", False),
        ("ProjectScan(name, root, error=str(error))\n", False),
        ("error = f'{root}: {problem}'\n", False),
        ("return record.failed(f'cannot push: {error}')\n", True),
        ("return _failed(record, f'{record.url} has no branch {branch}')\n", True),
        ("failed_record(before, f'cannot take in the commits: {error}')\n", True),
        ("return record.failed(cannot_push(error))\n", False),
        ("coordinator.save(index, record.failed(str(error)))\n", False),
        ("Skipped(scan.name, 'npm', name, spec, locus, 'not a string')\n", True),
        ("Skipped(p, e, n, c, locus, reason=f'{kind}, not a registry range')\n", True),
        ("Skipped(scan.name, 'engine', tool, text, locus, reason, LEFT_AS_IS)\n", False),
    ],
)
def test_the_multi_project_words_rule_sees_each_spelling(source: str, worded: bool) -> None:
    assert bool(_words_given(ast.parse(source))) is worded
