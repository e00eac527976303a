"""Jinja's compilation of a template source, shared by the renders of one process (the two
sides of an update, a fleet's versions, and within one copier render the same path parts and
answers-file name compiled again for every file).

Jinja compiles a source to the same code whenever the environment's compile settings, the
source and its name are the same (apart from the file name it writes into the code for
tracebacks), so a render's output is the same with or
without the sharing; only the time differs (docs/performance.md). (The file name is not part of
the key: see ``shared_compile``.) The renders of a process run
one at a time (``render_cache.ONE_RENDER``), so the table needs no lock of its own. Bounded.
"""

from __future__ import annotations

from typing import Any

_COMPILED: dict[tuple[Any, ...], Any] = {}
# A code object of a small template is a few KB: the bound keeps the table to tens of MB
# while a render of a 5,000-file template (its bodies and path parts) still fits whole.
COMPILED_MAX = 20_000

# What Jinja's lexer, parser, optimizer and code generator read from an environment besides
# the source (the filters and tests by name: an unknown one fails at compile time, and a
# constant expression through a filter is folded there).
_SETTINGS = (
    "block_start_string",
    "block_end_string",
    "variable_start_string",
    "variable_end_string",
    "comment_start_string",
    "comment_end_string",
    "line_statement_prefix",
    "line_comment_prefix",
    "trim_blocks",
    "lstrip_blocks",
    "newline_sequence",
    "keep_trailing_newline",
    "optimized",
    "is_async",
)


def compile_settings(environment: Any) -> tuple[Any, ...]:
    """What the compiled code of a source depends on in ``environment``."""
    return (
        tuple(repr(getattr(environment, name, None)) for name in _SETTINGS),
        tuple(sorted(environment.extensions)),
        tuple(sorted(environment.filters)),
        tuple(sorted(environment.tests)),
        repr(environment.autoescape),
        repr(environment.finalize),
        f"{type(environment).__module__}.{type(environment).__qualname__}",
        environment.code_generator_class.__qualname__,
        environment.undefined.__qualname__,
    )


def shared_compile(environment: Any, compile_once: Any, table: dict[Any, Any]) -> Any:
    """A ``compile`` for ``environment`` that asks ``compile_once`` (Jinja's own) only for a
    (settings, source, name, filename, options) not in ``table`` yet. The settings are read at
    the first compile: the renderers set an environment's filters and extensions up when they
    make it, before any template is compiled."""
    settings: list[tuple[Any, ...]] = []

    def compile(
        source: Any,
        name: str | None = None,
        filename: str | None = None,
        raw: bool = False,
        defer_init: bool = False,
    ) -> Any:
        if not settings:
            settings.append(compile_settings(environment))
        if not isinstance(source, str):  # a parsed template: compiled as it is
            return compile_once(source, name, filename, raw, defer_init)
        # Not the file name: a renderer reads each version from a checkout of its own, so the
        # same template file has another absolute path in each render. It is written into the
        # code only for tracebacks; the code of one render serves the other as it is.
        key = (settings[0], source, name, raw, defer_init)
        found = table.get(key)
        if found is None:
            found = compile_once(source, name, filename, raw, defer_init)
            if len(table) >= COMPILED_MAX:
                table.clear()
            table[key] = found
        return found

    return compile


def share_compilation(environment: Any, own_extensions: bool = False) -> Any:
    """Give ``environment`` the shared ``compile``; returns it. With ``own_extensions`` (the
    template brings Jinja extensions of its own) the sharing stays within this environment,
    that is within one render: an extension's module may be the template's own file, changed
    from one version to the next under the same name, and a filter it adds may be called at
    compile time (Jinja folds a filter of constants), so its compiled code is not shared with
    a render of another version."""
    table: dict[Any, Any] = {} if own_extensions else _COMPILED
    environment.compile = shared_compile(environment, environment.compile, table)
    return environment


# What Jinja's lexer reads from an environment to find template syntax in a source.
_SYNTAX_STARTS = ("block_start_string", "variable_start_string", "comment_start_string")


def renders_as_written(env: Any, text: str) -> bool:
    """Whether Jinja's ``env`` renders ``text`` to ``text`` itself without running anything:
    no line statement or comment prefix, newlines normalised to ``\\n`` and a trailing one
    kept, no extension rewriting a source before it is parsed, no start of Jinja syntax in
    the text, and one newline style only (Jinja turns every newline into ``\\n``)."""
    from jinja2.ext import Extension

    if env.line_statement_prefix is not None or env.line_comment_prefix is not None:
        return False
    if env.newline_sequence != "\n" or env.keep_trailing_newline is not True:
        return False
    for extension in env.extensions.values():
        kind = type(extension)
        if kind.preprocess is not Extension.preprocess:
            return False
        if kind.filter_stream is not Extension.filter_stream:
            return False
    starts = [getattr(env, setting) for setting in _SYNTAX_STARTS]
    if not all(isinstance(start, str) and start for start in starts):
        return False
    if any(start in text for start in starts):
        return False
    crlf = text.count("\r\n")
    styles = (crlf > 0) + (text.count("\r") > crlf) + (text.count("\n") > crlf)
    return styles <= 1
