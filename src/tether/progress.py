"""Progress of long work, told to whoever listens: the one way flows report how far they are.

Flows never print. A step that may take a while wraps itself in a phase and advances it as
it goes::

    with progress.phase("applying", len(pending)) as step:
        for batch in batches:
            ...
            step.advance(len(batch))

or, for a loop doing one unit per item, ``for rel in progress.tracked("planning", paths):``.

Who listens is the sink installed with ``use()`` for the current context (the command line
installs a renderer from ``tether.report.progress``); by default nobody does, and a phase
and its ``advance`` calls cost a couple of attribute look-ups. A thread started without a
copy of the context (a worker pool) reports to nobody, so concurrent work never draws
over itself.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from contextvars import ContextVar
from types import TracebackType

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which every command pays
if TYPE_CHECKING:
    from contextlib import AbstractContextManager  # contextlib is ~0.7 ms: not for status
    from typing import Protocol, TypeVar

    T = TypeVar("T")
else:
    Protocol = object  # the two protocols below are only read by the type checker


class Phase(Protocol):
    def advance(self, n: int = 1) -> None:
        """``n`` more units of the phase are done."""
        ...


class Sink(Protocol):
    def phase(self, name: str, total: int | None, unit: str) -> AbstractContextManager[Phase]:
        """A phase named ``name`` starts (``total`` units, None when unknown) and ends
        when the returned context exits, normally or by an exception."""
        ...


class _Silent:
    """The phase, its context and the sink of nobody listening, in one object."""

    def phase(self, name: str, total: int | None, unit: str) -> _Silent:
        return self

    def advance(self, n: int = 1) -> None:
        pass

    def __enter__(self) -> _Silent:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        return None


SILENT: Sink = _Silent()
_current: ContextVar[Sink] = ContextVar("tether_progress", default=SILENT)


def phase(
    name: str, total: int | None = None, unit: str = "files"
) -> AbstractContextManager[Phase]:
    """Report a phase of work to the current sink; see the module's docstring."""
    return _current.get().phase(name, total, unit)


class use:  # lower case: used as a function, ``with progress.use(sink):``
    """Send the phases started in this context, until it exits, to ``sink``."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink

    def __enter__(self) -> Sink:
        self._token = _current.set(self.sink)
        return self.sink

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        _current.reset(self._token)


def tracked(name: str, items: Collection[T], unit: str = "files") -> Iterator[T]:
    """``items`` one by one inside a phase that advances as each is done: one loop header
    (``for rel in progress.tracked("planning", paths):``) reports a whole loop."""
    with phase(name, len(items), unit) as step:
        for item in items:
            yield item
            step.advance()
