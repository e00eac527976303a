"""``audit shell``: pick the shell files in scope, run shellcheck and the lenses on each.

Files run concurrently; shellcheck results come from the cache when the file's bytes,
the shellcheck version and the arguments are unchanged. A file that cannot be read,
checked or parsed yields an error finding, never an empty (clean-looking) result.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import shlex
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any, Final

from tether import git
from tether.audit import dependencies, shellcheck, suppress
from tether.audit.findings import Finding, rule
from tether.audit.lenses import (
    LensContext,
    bash32,
    bats,
    batsdiff,
    discipline,
    hooks,
    paths,
    portability,
)
from tether.audit.lenses.guards import guarded_lines
from tether.audit.lenses.hooks import DependencyFacts
from tether.audit.result_cache import ResultCache, cache_key
from tether.audit.roster import GlobSet, Remit
from tether.audit.shellast import Node, parse
from tether.audit.tools import Toolset
from tether.errors import TetherError, UsageError
from tether.fsio import cannot_read, read_bytes, read_head
from tether.process import map_in_threads

_SHEBANG: Final = re.compile(r"^#!\s*(\S+)(.*)$")
_SH_INTERPRETERS: Final = {"sh", "dash", "ash"}
_BASH_INTERPRETERS: Final = {"bash", "bats"}
_SHELL_SUFFIXES: Final = {".sh", ".bash", ".bats"}
SETTINGS_FILES: Final = (".claude/settings.json", ".claude/settings.local.json")
_WORD: Final = re.compile(r"[\w.-]+")
_READS_OUTPUT: Final = re.compile(r"\$\{?output|assert_output|assert_line")
_PROJECT_DIR: Final = re.compile(r"^\$\{?CLAUDE_PROJECT_DIR\}?/")


@dataclass(frozen=True)
class Target:
    path: str
    dialect: str  # shellcheck's -s: bash or sh
    bats: bool
    hook: bool
    posix_hook: bool = False  # under a POSIX glob (husky): run as `sh -e`, never bash


@dataclass(frozen=True)
class FileResult:
    target: Target
    findings: tuple[Finding, ...]
    cached: bool
    facts: DependencyFacts | None = None  # a hook's, for the checks across files


@dataclass(frozen=True)
class ShellOptions:
    hooks: tuple[str, ...] = ()
    posix: tuple[str, ...] = ()
    jobs: int = 1
    cache: ResultCache = field(default_factory=lambda: ResultCache(None))


def interpreter(first_line: str) -> str | None:
    """The shell a shebang names (``/usr/bin/env -S bash -e`` → ``bash``), else None."""
    match = _SHEBANG.match(first_line)
    if not match:
        return None
    words = [match.group(1), *match.group(2).split()]
    if PurePosixPath(words[0]).name == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w] or [""]
    return PurePosixPath(words[0]).name or None


def classify(path: str, first_line: str, posix: GlobSet, hook_globs: GlobSet) -> Target | None:
    """The target for a shell file (by suffix, shebang, or a POSIX hook path), else None."""
    suffix = PurePosixPath(path).suffix
    shell = interpreter(first_line)
    is_posix_path = posix.matches(path)
    known_shell = shell in _SH_INTERPRETERS or shell in _BASH_INTERPRETERS
    if shell is not None and not known_shell and suffix != ".bats":
        return None  # zsh, fish, python …: not ours to check
    bare_hook = is_posix_path and not suffix and not PurePosixPath(path).name.startswith(".")
    if suffix not in _SHELL_SUFFIXES and not known_shell and not bare_hook:
        return None  # a hook without a shebang (husky's style) is still sh
    dialect = "sh" if is_posix_path or shell in _SH_INTERPRETERS else "bash"
    is_bats = suffix == ".bats" or shell == "bats"
    # A suite beside the hooks it tests (.claude/hooks/tests/x.bats) is never run as one.
    is_hook = hook_globs.matches(path) and not is_bats
    return Target(path, dialect, is_bats, is_hook, is_posix_path)


def select_targets(root: Path, paths: list[str], options: ShellOptions) -> list[Target]:
    posix, hook_globs = GlobSet(options.posix), GlobSet(options.hooks)
    registered = registered_hooks(root)
    targets = []
    for path in sorted(set(paths)):
        target = classify(path, _first_line(root / path), posix, hook_globs)
        if target is not None and path in registered and not target.hook and not target.bats:
            target = replace(target, hook=True)
        if target is not None:
            targets.append(target)
    return targets


def expand_paths(root: Path, paths: list[str]) -> list[str]:
    """Each given path, a folder replaced by the tracked files under it.

    A path that does not exist is a usage error; a folder holding no tracked file is an
    error too, so a mistyped folder never reads as "0 files, clean".
    """
    expanded: list[str] = []
    for path in paths:
        if (root / path).is_dir():
            inside = git.tracked_paths(root, [path])
            if not inside:
                raise TetherError(f"{path}: no tracked files in this folder")
            expanded.extend(inside)
        elif (root / path).exists():
            expanded.append(path)
        else:
            raise UsageError(f"{path}: no such file or folder")
    return expanded


def registered_hooks(root: Path) -> set[str]:
    """Files the agent runner's settings register as hook commands (relative paths).

    A hook's only caller is the ``command`` string in the settings file, so such a file
    is audited as a hook wherever it lives.
    """
    found: set[str] = set()
    for name in SETTINGS_FILES:
        path = root / name
        if not path.is_file():
            continue
        try:
            document = json.loads(read_bytes(path))
        except (OSError, ValueError) as error:
            raise TetherError(cannot_read(name, error, "the hook registrations")) from None
        for command_text in _hook_commands(document):
            found.update(_command_files(root, command_text))
    return found


def _hook_commands(document: Any) -> list[str]:
    hooks = document.get("hooks") if isinstance(document, dict) else None
    commands: list[str] = []
    for groups in hooks.values() if isinstance(hooks, dict) else []:
        for group in groups if isinstance(groups, list) else []:
            entries = group.get("hooks") if isinstance(group, dict) else None
            for entry in entries if isinstance(entries, list) else []:
                if isinstance(entry, dict) and isinstance(entry.get("command"), str):
                    commands.append(entry["command"])
    return commands


def _command_files(root: Path, text: str) -> set[str]:
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    found: set[str] = set()
    for word in words:
        rel = _PROJECT_DIR.sub("", word).removeprefix("./")
        if rel and not rel.startswith("/") and (root / rel).is_file():
            found.add(PurePosixPath(rel).as_posix())
    return found


_INTERPRETERS: Final = {
    "bash",
    "sh",
    "dash",
    "zsh",
    "node",
    "deno",
    "bun",
    "python",
    "python3",
    "ruby",
    "perl",
    "env",
}
_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _command_script(text: str) -> str | None:
    """The repository-relative script a hook ``command`` runs, when it names one: its
    first word, or an interpreter's first operand (``bash .claude/hooks/x.sh``)."""
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    words = [w for w in words if not _ASSIGNMENT.match(w)]
    if words and PurePosixPath(words[0]).name in _INTERPRETERS:
        words = [w for w in words[1:] if not w.startswith("-")]
    if not words:
        return None
    word = words[0]
    anchored = _PROJECT_DIR.match(word) is not None
    rel = _PROJECT_DIR.sub("", word).removeprefix("./")
    if not rel or rel.startswith(("/", "~", "$", "-")) or not (anchored or "/" in rel):
        return None  # a program on PATH, an absolute path, or one computed at run time
    return PurePosixPath(rel).as_posix()


def missing_hook_scripts(root: Path, remit: Remit, tracked: Sequence[str]) -> list[Finding]:
    """A ``hook/missing-script`` error for each registered hook command whose script is
    not a tracked file of the checkout (moved, renamed, deleted, never committed).

    A hook's only caller is that command string, so the breakage shows in no diff of the
    script. Checked when the remit covers the settings file or the missing script.
    ``tracked`` is every tracked file of the checkout (``git.ls_files``).
    """
    committed = set(tracked)
    found: list[Finding] = []
    for name in SETTINGS_FILES:
        path = root / name
        if not path.is_file():
            continue
        try:
            raw = read_bytes(path)
            document = json.loads(raw)
        except (OSError, ValueError) as error:
            raise TetherError(cannot_read(name, error, "the hook registrations")) from None
        text = raw.decode("utf-8", "replace")
        for command_text in _hook_commands(document):
            script = _command_script(command_text)
            if script is None or script in committed:
                continue
            if not (remit.covers(name) or remit.covers(script)):
                continue
            where = "is not committed" if (root / script).is_file() else "does not exist"
            line = _line_naming(text, json.dumps(command_text)[1:-1])
            finding = rule("hook/missing-script").at(
                name,
                line,
                f"{name} registers `{command_text}`; {script} {where} in the checkout",
                title=f"registered hook script {script} {where}",
            )
            found.append(finding)
    return found


def _line_naming(text: str, needle: str) -> int:
    at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


_RUNS_SCRIPT: Final = re.compile(
    r"(?:^|[\s;&|({`])(?:\.|source|bash|sh|dash|exec)\s+[\"']?([^\s\"';|&)`]+)", re.MULTILINE
)
_CALLER_SUFFIXES: Final = (".sh", ".bash", ".bats", ".yml", ".yaml")


def callers(root: Path, changed: Sequence[str], tracked: Sequence[str]) -> dict[str, list[str]]:
    """For each changed script, the tracked files that source or run it (``. lib.sh``,
    ``source``, ``bash x.sh``, a workflow's ``run:``) and the settings files registering it
    as a hook. A diff never shows them, yet a changed contract breaks them."""
    if not changed:
        return {}
    by_name: dict[str, list[str]] = {}
    for path in changed:
        by_name.setdefault(PurePosixPath(path).name, []).append(path)
    found: dict[str, set[str]] = {path: set() for path in changed}
    for candidate in tracked:
        if not candidate.endswith(_CALLER_SUFFIXES) and candidate not in SETTINGS_FILES:
            continue
        try:
            text = read_bytes(root / candidate).decode("utf-8", "replace")
        except OSError:
            continue
        operands = {_PROJECT_DIR.sub("", m) for m in _RUNS_SCRIPT.findall(text)}
        if candidate in SETTINGS_FILES:
            operands |= {
                s for c in _hook_commands(_json_or_none(text)) if (s := _command_script(c))
            }
        for operand in operands:
            # The path itself, or a word whose last component is its file name
            # (``"$here/lib/common.sh"``): a caller whose folder is computed at run time.
            for path in by_name.get(PurePosixPath(operand.removeprefix("./")).name, []):
                if candidate != path:
                    found[path].add(candidate)
    return {path: sorted(users) for path, users in found.items() if users}


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def link_pinning_suites(
    root: Path, results: list[FileResult], tracked: Sequence[str]
) -> list[FileResult]:
    """Name, on each script's findings, the bats suites that pin the script's output.

    A suite asserting a script's printed words breaks when the script rewords them,
    though the diff never touches the suite: the reviewer must read it.
    """
    suites = [p for p in tracked if p.endswith(".bats")]
    texts = {}
    for suite in suites:
        try:
            texts[suite] = read_bytes(root / suite).decode("utf-8", "replace")
        except OSError:
            continue
    readers = {
        suite: (text, frozenset(_WORD.findall(text)))
        for suite, text in sorted(texts.items())
        if _READS_OUTPUT.search(text)
    }
    out = []
    for result in results:
        path = result.target.path
        name = PurePosixPath(path).name
        pins = tuple(
            suite
            for suite, (text, words) in readers.items()
            if suite != path and (name in words or path in text)
        )
        if pins and result.findings:
            linked = tuple(replace(f, linked_tests=pins) for f in result.findings)
            result = replace(result, findings=linked)
        out.append(result)
    return out


def _first_line(path: Path) -> str:
    try:
        head = read_head(path, 512)  # a FIFO or device is refused unread, never waited on
    except OSError:
        return ""
    return head.split(b"\n", 1)[0].decode("utf-8", "replace").rstrip("\r")


def analyse_file(root: Path, target: Target, tools: Toolset, options: ShellOptions) -> FileResult:
    try:
        data = read_bytes(root / target.path)
    except OSError as error:
        reason = f"cannot read it ({error.strerror or error})"
        return FileResult(
            target, (shellcheck.cannot_analyse(target.path, reason, 1, "open"),), False
        )
    return analysed(target, data, tools, options)


def analysed(target: Target, data: bytes, tools: Toolset, options: ShellOptions) -> FileResult:
    """shellcheck's and the lenses' findings on ``data`` as ``target``, sorted, with
    whether shellcheck's result came from the cache and a hook's dependency facts."""
    checked = shellcheck.run_shellcheck(tools.shellcheck, data, target.dialect, options.cache)
    found = shellcheck.findings_for(target.path, checked, tools.shellcheck, target.dialect)
    lens_found, facts = _cached_lens_analysis(target, data, tools, options.cache)
    found = suppress.apply(target.path, data, found + lens_found)
    return FileResult(target, tuple(sorted(found, key=Finding.sort_key)), checked.cached, facts)


@lru_cache(maxsize=1)
def lens_code_digest() -> str:
    """sha256 of the code the lens findings depend on: a new lens invalidates the cache."""
    here = Path(__file__).parent
    sources = sorted((here / "lenses").glob("*.py")) + [
        here / name for name in ("shellast.py", "findings.py", "shell.py")
    ]
    hasher = hashlib.sha256()
    for source in sources:
        hasher.update(source.name.encode() + b"\0" + read_bytes(source))
    return hasher.hexdigest()


def _cached_lens_analysis(
    target: Target, data: bytes, tools: Toolset, cache: ResultCache
) -> tuple[list[Finding], DependencyFacts | None]:
    """The lens findings and a hook's dependency facts, cached together."""
    key = cache_key(
        "lenses",
        lens_code_digest(),
        tools.shfmt.version or "",
        target.path,
        target.dialect,
        str(target.bats),
        str(target.hook),
        str(target.posix_hook),
        hashlib.sha256(data).hexdigest(),
    )
    stored = cache.get(key)
    if isinstance(stored, dict):
        with contextlib.suppress(TypeError, KeyError, ValueError, AttributeError):
            # an entry in another shape is a miss
            facts = stored["facts"]
            return (
                [_finding_from_json(entry) for entry in stored["findings"]],
                None if facts is None else DependencyFacts.from_json(facts),
            )
    found, facts = _lens_analysis(target, data, tools)
    if not any(f.finding_class == "audit/cannot-analyse" for f in found):
        # a failure is retried, never remembered
        entry = {
            "findings": [asdict(f) for f in found],
            "facts": None if facts is None else facts.to_json(),
        }
        cache.put(key, entry)
    return found, facts


def _finding_from_json(entry: dict[str, Any]) -> Finding:
    return Finding(
        **{
            **entry,
            "area_tags": tuple(entry["area_tags"]),
            "linked_tests": tuple(entry["linked_tests"]),
            "suppression": None,  # applied after the cache, from the file's own bytes
        }
    )


def _lens_analysis(
    target: Target, data: bytes, tools: Toolset
) -> tuple[list[Finding], DependencyFacts | None]:
    parser = f"shfmt {tools.shfmt.version} ({tools.shfmt.source})"
    parsed = parse(tools.shfmt, data, "bats" if target.bats else "bash")
    if parsed.tree is None:
        reason = parsed.error or "shfmt printed no syntax tree"
        return [shellcheck.cannot_analyse(target.path, reason, parsed.error_line, parser)], None
    tree, ctx = parsed.tree, LensContext(target.path, parser)
    first_line = data.split(b"\n", 1)[0].decode("utf-8", "replace")
    lenses: list[tuple[str, Callable[[], list[Finding]]]] = [
        ("portability", lambda: downgrade_guarded(tree, portability.check(tree, ctx))),
        ("paths", lambda: paths.check(tree, ctx)),
    ]
    if target.dialect == "bash":
        # bash 3.2 advice is for bash; POSIX sh's own limits are shellcheck's (-s sh).
        lenses.insert(0, ("bash32", lambda: downgrade_guarded(tree, bash32.check(tree, ctx))))
    if target.bats:
        lenses.append(("bats", lambda: bats.check(tree, ctx)))
    if target.hook:
        lenses.append(("hooks", lambda: hooks.check(tree, ctx, first_line)))
    elif not target.bats and not target.posix_hook:
        # A husky hook runs as `sh -e`: errexit is already on, and pipefail is not POSIX.
        lenses.append(("discipline", lambda: discipline.check(tree, ctx, first_line)))
    found: list[Finding] = []
    for name, lens in lenses:
        try:
            found.extend(lens())
        except Exception as error:  # a lens bug must not read as a clean file
            reason = f"the {name} lens failed ({type(error).__name__}: {error})"
            found.append(shellcheck.cannot_analyse(target.path, reason, 1, parser))
    facts = None
    if target.hook:
        try:
            facts = hooks.dependency_facts(tree, first_line)
        except Exception as error:
            reason = f"the hooks lens failed ({type(error).__name__}: {error})"
            found.append(shellcheck.cannot_analyse(target.path, reason, 1, parser))
    return found, facts


def downgrade_guarded(tree: Node, found: list[Finding]) -> list[Finding]:
    """Findings inside a platform- or version-guarded branch become suggestions."""
    lines = guarded_lines(tree) if found else set()
    return [replace(f, severity="suggestion") if f.line in lines else f for f in found]


def analyse(
    root: Path, targets: list[Target], tools: Toolset, options: ShellOptions, tracked: Sequence[str]
) -> list[FileResult]:
    """Each target's findings; ``tracked`` is every tracked file of the checkout."""
    if not targets:
        return []
    results = map_in_threads(lambda t: analyse_file(root, t, tools, options), targets, options.jobs)
    results = _weigh_dependencies(root, results, tools, options, tracked)
    return link_pinning_suites(root, results, tracked)


def _weigh_dependencies(
    root: Path,
    results: list[FileResult],
    tools: Toolset,
    options: ShellOptions,
    tracked: Sequence[str],
) -> list[FileResult]:
    """Drop the ``hook/unguarded-dependency`` findings a check in another file answers
    (audit/dependencies.py): a guard function from a sourced library, or, for a
    library, the hooks sourcing it having checked first."""
    known = {r.target.path: r.facts for r in results if r.facts is not None}
    if not any(facts.unguarded for facts in known.values()):
        return results
    posix, hook_globs = GlobSet(options.posix), GlobSet(options.hooks)
    registered = registered_hooks(root)
    hook_files = [
        path
        for path in tracked
        if (hook_globs.matches(path) or path in registered)
        and (target := classify(path, _first_line(root / path), posix, hook_globs)) is not None
        and not target.bats
    ]

    def facts_of(path: str) -> DependencyFacts | None:
        try:
            data = read_bytes(root / path)
        except OSError:
            return None
        target = classify(path, _first_line(root / path), posix, hook_globs)
        if target is None:
            return None
        return _cached_lens_analysis(replace(target, hook=True), data, tools, options.cache)[1]

    def naming(name: str) -> list[str]:
        needle = name.encode("utf-8", "surrogateescape")
        found = []
        for path in hook_files:
            with contextlib.suppress(OSError):
                if needle in read_bytes(root / path):
                    found.append(path)
        return found

    answered = dependencies.answered_elsewhere(known, hook_files, facts_of, naming)
    if not answered:
        return results
    out = []
    for result in results:
        path = result.target.path
        kept = tuple(
            f
            for f in result.findings
            if not (
                f.finding_class == "hook/unguarded-dependency"
                and (path, f.title.split(" ", 1)[0], f.line) in answered
            )
        )
        out.append(replace(result, findings=kept) if len(kept) != len(result.findings) else result)
    return out


def blobs_at(root: Path, rev: str, paths: Sequence[str]) -> dict[str, bytes]:
    """The bytes of each of ``paths`` in commit ``rev`` (absent ones left out), through
    two git processes whatever the number of paths."""
    wanted = set(paths)
    if not wanted:
        return {}
    oids = {
        path: oid
        for _, kind_, oid, path in git.ls_tree_entries(root, rev)
        if kind_ == "blob" and path in wanted
    }
    blobs = git.read_blobs(root, sorted(set(oids.values())))
    return {path: blobs[oid] for path, oid in oids.items() if oid in blobs}


_CANNOT_ANALYSE: Final = "audit/cannot-analyse"
FindingKey = tuple[str, str, str, str]


def downgrade_inherited(
    root: Path, base: str, results: list[FileResult], tools: Toolset, options: ShellOptions
) -> list[FileResult]:
    """``--diff-only``: an error the base commit already had becomes a suggestion.

    Existing suites carry many grandfathered findings; only what a branch introduces
    should block it. "Already had" compares the findings of the file at ``base`` with
    those now, by class, title, severity and the text of the line, never by line
    numbers: a branch that adds a command after a suite's last check makes that check
    hollow on a line its diff never touches, and lines that merely moved keep their
    findings. A file new on the branch inherits nothing; a file that cannot be analysed
    stays an error: nothing was checked.
    """
    blocking = [r.target.path for r in results if any(_blocks(f) for f in r.findings)]
    at_base = blobs_at(root, base, blocking)

    def inherited(result: FileResult) -> FileResult:
        if not any(_blocks(f) for f in result.findings):
            return result
        old = at_base.get(result.target.path)
        try:
            new = read_bytes(root / result.target.path)
        except OSError:
            return result
        if old is None:
            return result
        before = analysed(result.target, old, tools, options).findings
        counts = Counter(_finding_key(f, _lines(old)) for f in before)
        new_lines = _lines(new)
        findings = []
        for finding in result.findings:
            key = _finding_key(finding, new_lines)
            if _blocks(finding) and counts[key] > 0:
                counts[key] -= 1
                finding = replace(finding, severity="suggestion")
            findings.append(finding)
        return replace(result, findings=tuple(findings))

    return map_in_threads(inherited, results, options.jobs)


def _blocks(finding: Finding) -> bool:
    return finding.severity == "error" and finding.finding_class != _CANNOT_ANALYSE


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", "replace").splitlines()


def _finding_key(finding: Finding, lines: list[str]) -> FindingKey:
    text = lines[finding.line - 1].strip() if 0 < finding.line <= len(lines) else ""
    return (finding.finding_class, finding.title, finding.severity, text)


def compare_suites(
    root: Path, base: str, targets: Sequence[Target], tools: Toolset, cache: ResultCache
) -> list[Finding]:
    """Each bats suite against its version at ``base`` (lenses/batsdiff.py): dropped
    tests, removed or weakened checks, added skips. A suite new on the branch, or one
    either side of which does not parse, is left to the other lenses. Results are cached
    by both versions' bytes, the shfmt version and the lens code."""
    suites = [t for t in targets if t.bats]
    at_base = blobs_at(root, base, [t.path for t in suites])
    found: list[Finding] = []
    for target in suites:
        old = at_base.get(target.path)
        try:
            new = read_bytes(root / target.path)
        except OSError:
            continue
        if old is None or old == new:
            continue
        changed = _cached_comparison(target, old, new, base, tools, cache)
        found.extend(suppress.apply(target.path, new, changed, report_invalid=False))
    return found


def _cached_comparison(
    target: Target, old: bytes, new: bytes, base: str, tools: Toolset, cache: ResultCache
) -> list[Finding]:
    key = cache_key(
        "batsdiff",
        lens_code_digest(),
        tools.shfmt.version or "",
        target.path,
        base,
        hashlib.sha256(old).hexdigest(),
        hashlib.sha256(new).hexdigest(),
    )
    stored = cache.get(key)
    if isinstance(stored, list):
        with contextlib.suppress(TypeError, KeyError):
            return [_finding_from_json(entry) for entry in stored]
    before, after = parse(tools.shfmt, old, "bats"), parse(tools.shfmt, new, "bats")
    if before.tree is None or after.tree is None:
        return []  # the lenses report the file that does not parse
    ctx = LensContext(target.path, f"shfmt {tools.shfmt.version}, against {base[:12]}")
    changed = batsdiff.compare(before.tree, old, after.tree, new, ctx)
    cache.put(key, [asdict(f) for f in changed])
    return changed


_TEST_CASE: Final = re.compile(rb"^[ \t]*@test[ \t]", re.MULTILINE)


def deleted_suites(root: Path, base: str, deleted: Sequence[str]) -> list[Finding]:
    """A ``bats/deleted-suite`` warning for each bats suite the branch deleted.

    A deletion is a change: a branch whose only change removes a suite retires every
    check in it, and must not read as "0 files, nothing to review".
    """
    at_base = blobs_at(root, base, deleted)
    found = []
    for path in deleted:
        data = at_base.get(path)
        if data is None:
            continue
        first = data.split(b"\n", 1)[0].decode("utf-8", "replace")
        if not path.endswith(".bats") and interpreter(first) != "bats":
            continue
        cases = len(_TEST_CASE.findall(data))
        dropped = rule("bats/deleted-suite").at(
            path, 1, f"absent at HEAD; at {base[:12]} the suite held {cases} @test cases"
        )
        failure = f"{cases} @test cases no longer run: {dropped.failure_mode}"
        found.append(replace(dropped, failure_mode=failure))
    return found


def report(
    results: list[FileResult],
    tools: Toolset,
    vocabulary: str,
    extra: Sequence[Finding] = (),
    domain: Remit | None = None,
) -> dict[str, Any]:
    """The shell document; ``extra`` are findings no file's analysis made (deletions, the
    settings file, a suite against its base). With a ``domain`` (a remit with globs), a
    finding on a file outside it and outside the gate machinery is cross-remit: listed in
    ``cross_remit``, never counted against the member."""
    every = [f for r in results for f in r.findings] + list(extra)
    findings = sorted(every, key=Finding.sort_key)
    outside = [
        f
        for f in findings
        if domain is not None and not (domain.covers(f.path) or domain.is_machinery(f.path))
    ]
    crossing = {id(f) for f in outside}
    own = [f for f in findings if id(f) not in crossing]
    counts = {level: 0 for level in ("error", "warning", "suggestion")}
    for finding in own:
        counts[finding.severity] += 1
    counts["suppressed"] = sum(1 for f in own if f.suppression is not None)
    counts["cross_remit"] = len(outside)
    return {
        "tools": {"shellcheck": tools.shellcheck.to_json(), "shfmt": tools.shfmt.to_json()},
        "vocabulary": vocabulary,
        "files": [
            {
                "path": r.target.path,
                "dialect": r.target.dialect,
                "bats": r.target.bats,
                "hook": r.target.hook,
                "cached": r.cached,
            }
            for r in results
        ],
        "findings": [f.to_json(vocabulary) for f in own],
        "cross_remit": [f.to_json(vocabulary) for f in outside],
        "counts": counts,
    }
