"""A hook's dependency checks, weighed across the files it sources and the files sourcing it.

The hook lens reads one file: a ``jq`` used before a ``command -v jq`` in that file is a
``hook/unguarded-dependency`` warning. Two checks live in other files, and this module
weighs them after every file was read:

- a hook that calls a function defined in a library it sources, whose body checks the
  tool (``gaia_require_jq`` running ``command -v jq``), has checked it from the line of
  that call on;
- a sourced library (function definitions only) uses the tool on behalf of the hooks
  that source it: its warning is dropped when at least one hook sources it and every
  hook that does checks the tool (itself, through such a function, or by being a
  library every one of whose own sourcing hooks checks it) on a line before the one
  sourcing the library. A library no hook sources keeps its warning: nobody vouches for
  it. Test suites and other scripts sourcing it are not hooks and vouch for nothing.

A sourced file is found by its file name (``. "$here/lib/hook-payload.sh"``: the folder
is computed at run time), among the files held to the hook contract.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence

from tether.audit.lenses.hooks import DependencyFacts


class _Sources:
    """Facts of the hook files, fetched once each; libraries resolved by file name."""

    def __init__(
        self,
        known: dict[str, DependencyFacts],
        hook_files: Sequence[str],
        facts_of: Callable[[str], DependencyFacts | None],
        naming: Callable[[str], list[str]],
    ) -> None:
        self._known: dict[str, DependencyFacts | None] = dict(known)
        self._facts_of = facts_of
        self._naming = naming
        self._by_name: dict[str, list[str]] = {}
        for path in hook_files:
            self._by_name.setdefault(posixpath.basename(path), []).append(path)

    def facts(self, path: str) -> DependencyFacts | None:
        if path not in self._known:
            self._known[path] = self._facts_of(path)
        return self._known[path]

    def guard_functions(self, path: str, seen: frozenset[str]) -> dict[str, tuple[str, ...]]:
        """Functions visible in ``path`` (its own and its libraries') that check a tool."""
        facts = self.facts(path)
        if facts is None:
            return {}
        found = dict(facts.guard_functions)
        for name in facts.sources:
            for library in self._by_name.get(name, []):
                if library != path and library not in seen:
                    inherited = self.guard_functions(library, seen | {path})
                    found = {**inherited, **found}
        return found

    def guard_line(self, path: str, tool: str) -> int | None:
        """The first line from which ``path`` has checked ``tool``, if it ever does."""
        facts = self.facts(path)
        if facts is None:
            return None
        lines = [facts.guards[tool]] if tool in facts.guards else []
        for function, tools in self.guard_functions(path, frozenset()).items():
            if tool in tools and function in facts.calls:
                lines.append(facts.calls[function])
        return min(lines) if lines else None

    def vouched(self, library: str, tool: str, seen: frozenset[str]) -> bool:
        """True when hooks source ``library`` and every one checked ``tool`` first."""
        name = posixpath.basename(library)
        callers = []
        for path in self._naming(name):
            facts = self.facts(path)
            if path != library and facts is not None and name in facts.sources:
                callers.append((path, facts))
        if not callers:
            return False
        for path, facts in callers:
            guarded = self.guard_line(path, tool)
            if guarded is not None and guarded < facts.sources[name]:
                continue
            if facts.library and path not in seen and self.vouched(path, tool, seen | {library}):
                continue
            return False
        return True


def answered_elsewhere(
    known: dict[str, DependencyFacts],
    hook_files: Sequence[str],
    facts_of: Callable[[str], DependencyFacts | None],
    naming: Callable[[str], list[str]],
) -> set[tuple[str, str, int]]:
    """(path, tool, line) of each unguarded use in ``known`` (the analysed hooks' facts by
    path) that another file's check answers (module docstring). ``hook_files`` are the
    files held to the hook contract, ``facts_of`` reads one's facts, ``naming`` lists
    those whose bytes hold a given file name; neither is called when nothing needs them."""
    flagged = {path: facts for path, facts in known.items() if facts.unguarded}
    if not flagged:
        return set()
    sources = _Sources(dict(known), hook_files, facts_of, naming)
    answered: set[tuple[str, str, int]] = set()
    for path, facts in flagged.items():
        for tool, line in facts.unguarded.items():
            guarded = sources.guard_line(path, tool)
            if (guarded is not None and guarded < line) or (
                facts.library and sources.vouched(path, tool, frozenset({path}))
            ):
                answered.add((path, tool, line))
    return answered
