"""The Jinja compilation the renders of one process share (``templates.jinja_sharing``):
shared only where Jinja would compile to the same code, with real Jinja environments."""

from __future__ import annotations

import pytest

from tether.templates.jinja_sharing import share_compilation

# jinja2 is imported by the tests, not when the module is collected: every test process
# collects every module, and most run none of these tests.
SOURCE = "<< name >> {{ name }}\n"


def test_environments_with_other_settings_never_share_compiled_code() -> None:
    import jinja2

    plain = share_compilation(jinja2.Environment(keep_trailing_newline=True))
    angled = share_compilation(
        jinja2.Environment(
            variable_start_string="<<", variable_end_string=">>", keep_trailing_newline=True
        )
    )
    assert plain.from_string(SOURCE).render(name="x") == "<< name >> x\n"
    assert angled.from_string(SOURCE).render(name="x") == "x {{ name }}\n"
    assert plain.from_string(SOURCE).render(name="y") == "<< name >> y\n"


def test_a_filter_folded_at_compile_time_is_never_taken_from_another_render() -> None:
    """Jinja calls a filter of constants while it compiles; a template that brings its own
    extensions (its own filters, whose code may change from one version to the next under the
    same name) shares nothing with another render."""
    import jinja2

    source = "{{ 'a' | shout }}"
    first = jinja2.Environment()
    first.filters["shout"] = lambda text: text.upper()
    share_compilation(first, own_extensions=True)
    assert first.from_string(source).render() == "A"
    second = jinja2.Environment()
    second.filters["shout"] = lambda text: text + "!"
    share_compilation(second, own_extensions=True)
    assert second.from_string(source).render() == "a!"


def test_the_same_source_in_the_same_settings_is_compiled_once() -> None:
    import jinja2

    compiled: list[str] = []

    def environment() -> jinja2.Environment:
        made = jinja2.Environment()
        real = made.compile

        def counting(source, name=None, filename=None, raw=False, defer_init=False):  # type: ignore[no-untyped-def]
            compiled.append(source)
            return real(source, name, filename, raw, defer_init)

        made.compile = counting  # type: ignore[method-assign]
        return share_compilation(made)

    one, two = environment(), environment()
    assert one.from_string("{{ 1 + n }}").render(n=1) == "2"
    assert two.from_string("{{ 1 + n }}").render(n=2) == "3"
    assert compiled == ["{{ 1 + n }}"]


def test_the_table_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import jinja2

    from tether.templates import jinja_sharing

    table: dict[object, object] = {}
    monkeypatch.setattr(jinja_sharing, "_COMPILED", table)
    monkeypatch.setattr(jinja_sharing, "COMPILED_MAX", 2)
    environment = share_compilation(jinja2.Environment())
    for number in range(5):
        assert environment.from_string(f"{{{{ {number} }}}}").render() == str(number)
        assert len(table) <= 2
