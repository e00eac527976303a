"""``tether.valueclass`` makes a class as ``dataclasses.dataclass`` would, without importing
dataclasses: each behaviour is checked side by side with a real dataclass of the same fields."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import ClassVar

import pytest

from tether.valueclass import FrozenInstanceError, field, replace, valueclass


@valueclass(frozen=True)
class Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = field(default_factory=tuple)
    note: str = field(default="", repr=False, compare=False)
    kind: ClassVar[str] = "point"


@dataclasses.dataclass(frozen=True)
class RealPoint:
    x: int
    y: int = 0
    tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)
    note: str = dataclasses.field(default="", repr=False, compare=False)
    kind: ClassVar[str] = "point"


@valueclass()
class Counter:
    name: str
    seen: list[str] = field(default_factory=list)


@valueclass(frozen=True)
class Derived:
    text: str
    length: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "length", len(self.text))


CALLS: list[tuple[tuple[object, ...], dict[str, object]]] = [
    ((1,), {}),
    ((1, 2), {}),
    ((1, 2, ("a",)), {}),
    ((), {"x": 1, "tags": ("b",), "note": "n"}),
    ((1,), {"y": 5}),
]


@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_made_values_match_a_dataclass(args: tuple[object, ...], kwargs: dict[str, object]) -> None:
    ours, real = Point(*args, **kwargs), RealPoint(*args, **kwargs)  # type: ignore[arg-type]
    assert repr(ours) == repr(real).replace("RealPoint", "Point")
    assert (ours.x, ours.y, ours.tags, ours.note) == (real.x, real.y, real.tags, real.note)
    assert hash(ours) == hash(real)
    assert Point.__match_args__ == RealPoint.__match_args__
    assert Point.kind == "point"
    # The instance holds the same fields in the same order (what vars() and a copy show).
    assert list(vars(ours).items()) == list(vars(real).items())


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((), {}),
        ((1, 2, (), "n", 5), {}),
        ((1,), {"x": 2}),
        ((1,), {"z": 2}),
        ((), {"y": 2}),
        ((), {"y": 2, "z": 3}),
        ((1, 2), {"y": 3, "tags": ()}),
    ],
)
def test_a_wrong_call_fails_as_a_dataclass_does(
    args: tuple[object, ...], kwargs: dict[str, object]
) -> None:
    with pytest.raises(TypeError) as ours:
        Point(*args, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(TypeError) as real:
        RealPoint(*args, **kwargs)  # type: ignore[arg-type]
    assert str(ours.value).split("() ", 1)[1] == str(real.value).split("() ", 1)[1]


def test_equality_compares_the_compared_fields_of_the_same_class() -> None:
    assert Point(1, 2, note="a") == Point(1, 2, note="b")
    assert Point(1, 2) != Point(1, 3)
    assert Point(1) != RealPoint(1)
    assert Point(1).__eq__(RealPoint(1)) is NotImplemented
    assert {Point(1, 2): "p"}[Point(1, 2, note="other")] == "p"
    assert Counter("a") == Counter("a", [])


def test_each_instance_gets_its_own_default_from_a_factory() -> None:
    first, second = Counter("a"), Counter("b")
    first.seen.append("x")
    assert second.seen == []
    assert Counter("a").seen is not Counter("a").seen


def test_a_frozen_value_refuses_changes_and_a_mutable_one_is_unhashable() -> None:
    point = Point(1)
    with pytest.raises(FrozenInstanceError):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del point.y  # type: ignore[misc]
    counter = Counter("a")
    counter.name = "b"
    assert counter.name == "b"
    with pytest.raises(TypeError):
        hash(counter)


@dataclasses.dataclass(frozen=True)
class RealDerived:
    text: str
    length: int = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "length", len(self.text))


def test_a_field_init_does_not_take_is_set_where_a_dataclass_sets_it() -> None:
    """A field without a default that __init__ does not take is first set by
    __post_init__, after the others, as in a dataclass; each factory makes its own value."""
    for made in (Derived("abc"), Derived(text="abc")):
        assert list(vars(made).items()) == list(vars(RealDerived("abc")).items())
    first, second = Counter("a"), Counter(name="b")
    assert list(vars(first)) == ["name", "seen"]
    assert first.seen is not second.seen


def test_post_init_sets_fields_init_does_not_take() -> None:
    value = Derived("four")
    assert value.length == 4
    assert repr(value) == "Derived(text='four')"
    assert replace(value, text="seven").length == 5
    with pytest.raises(ValueError, match="length"):
        replace(value, length=1)


def test_replace_copies_every_other_field() -> None:
    point = Point(1, 2, ("t",), "n")
    moved = replace(point, y=3)
    assert (moved.x, moved.y, moved.tags, moved.note) == (1, 3, ("t",), "n")
    assert point.y == 2
    counter = replace(Counter("a", ["x"]), name="b")
    assert counter == Counter("b", ["x"])


def test_values_pickle_and_copy() -> None:
    point = Point(1, 2, ("t",), "n")
    for again in (pickle.loads(pickle.dumps(point)), copy.copy(point), copy.deepcopy(point)):
        assert again == point and again.note == "n"


def test_a_definition_dataclasses_refuses_is_refused() -> None:
    with pytest.raises(TypeError, match="factory"):

        @valueclass()
        class Shared:
            names: list[str] = []  # noqa: RUF012

    with pytest.raises(TypeError, match="no default"):

        @valueclass()
        class Order:
            first: int = 0
            second: int  # type: ignore[misc]


def test_a_field_without_an_annotation_is_refused_as_dataclasses_refuses_it() -> None:
    """A ``field()`` the class gives no annotation is no field to dataclasses, which refuses
    the class; left as it is it would be a class attribute every value shows (the ``Field``
    itself), never set by ``__init__`` nor compared."""
    with pytest.raises(TypeError, match="no type annotation"):

        @dataclasses.dataclass
        class RealLoose:
            name: str
            size = dataclasses.field(default=0)

    with pytest.raises(TypeError, match="no type annotation"):

        @valueclass()
        class Loose:
            name: str
            size = field(default=0)


def test_a_method_the_class_defines_is_kept() -> None:
    @valueclass(frozen=True)
    class Named:
        name: str

        def __repr__(self) -> str:
            return f"<{self.name}>"

    assert repr(Named("a")) == "<a>"
    assert Named("a") == Named("a") and hash(Named("a")) == hash(Named("a"))
