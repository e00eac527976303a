"""Classes of plain values, made as ``dataclasses.dataclass`` makes them, at a fraction of
its start-up cost.

``dataclasses`` imports ``inspect`` (and with it ``ast``, ``dis``, ``tokenize``: ~9 ms) and
compiles generated source for every class it makes (~0.6 ms each). On the path of ``status``
and ``check``, which run in every pre-commit hook and CI build, the two were a third of the
command's time (docs/performance.md, "Small projects"). ``valueclass`` gives a class the same
methods built from closures over its fields, with nothing compiled:

- ``__init__``: the fields in order, by position or by name, a default or a default factory
  (``field``), ``init=False`` fields left to ``__post_init__``, which runs last;
- ``__repr__`` and ``__eq__`` over the fields (``repr=False``, ``compare=False`` leave one
  out); ``__eq__`` only between instances of the same class, as ``dataclasses`` compares;
- for ``frozen=True``: ``__setattr__`` and ``__delattr__`` refusing any change
  (``FrozenInstanceError``, an ``AttributeError``) and ``__hash__`` over the compared fields;
  otherwise the class is unhashable, as a dataclass with ``eq`` is;
- ``__match_args__``. A method the class defines itself is kept.

``replace`` is ``dataclasses.replace`` for these classes; ``dataclasses``' own functions
(``replace``, ``fields``, ``asdict``) do not take them. Type checkers read a ``valueclass``
as a dataclass (PEP 681, ``dataclass_transform``). Not supported (a ``TypeError`` at import):
``InitVar``, ``KW_ONLY``, a mutable default (a ``list``, ``dict`` or ``set``) given without
a factory, a field without a default after one with a default, a ``field()`` without an
annotation. The fields are the class's own ``__annotations__`` as the class body stores them:
its module says ``from __future__ import annotations`` (every module of tether does).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which status and check pay
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, dataclass_transform, overload

    _T = TypeVar("_T")
    _C = TypeVar("_C", bound=type)
    _V = TypeVar("_V")

# Where a class keeps its fields: name -> Field, in the order ``__init__`` takes them.
FIELDS = "__valueclass_fields__"


class _Missing:
    """No default given (``None`` is a default like any other)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FrozenInstanceError(AttributeError):
    """A field of a frozen value was assigned or deleted."""


class Field:
    """One field's default, or its default factory, and where it takes part."""

    __slots__ = ("compare", "default", "default_factory", "init", "repr")

    def __init__(
        self,
        default: Any = MISSING,
        default_factory: Any = MISSING,
        init: bool = True,
        repr: bool = True,
        compare: bool = True,
    ) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot give both default and default_factory")
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.compare = compare

    def value(self) -> Any:
        """The default for an instance that is not given one (MISSING: none)."""
        if self.default_factory is not MISSING:
            return self.default_factory()
        return self.default


if TYPE_CHECKING:

    @overload
    def field(*, default: _T, init: bool = True, repr: bool = True, compare: bool = True) -> _T: ...
    @overload
    def field(
        *,
        default_factory: Callable[[], _T],
        init: bool = True,
        repr: bool = True,
        compare: bool = True,
    ) -> _T: ...
    @overload
    def field(*, init: bool = True, repr: bool = True, compare: bool = True) -> Any: ...
    def field(
        *,
        default: Any = MISSING,
        default_factory: Any = MISSING,
        init: bool = True,
        repr: bool = True,
        compare: bool = True,
    ) -> Any:
        """A field's default or default factory, and whether ``__init__``, ``__repr__`` and
        ``__eq__`` take it (as ``dataclasses.field``)."""

    @dataclass_transform(field_specifiers=(field,))
    def valueclass(*, frozen: bool = False) -> Callable[[_C], _C]:
        """Make the decorated class a value class (see the module)."""

else:

    def field(
        *,
        default=MISSING,
        default_factory=MISSING,
        init=True,
        repr=True,
        compare=True,
    ):
        return Field(default, default_factory, init, repr, compare)

    def valueclass(*, frozen=False):
        def make(cls):
            return _made(cls, frozen)

        return make


def _made(cls: type, frozen: bool) -> type:
    fields: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        fields.update(getattr(base, FIELDS, {}))
    # The class's own annotations (not its bases'): inspect.get_annotations is what this
    # module does without.
    own = cls.__dict__.get("__annotations__", {})  # noqa: RUF063
    for name, annotation in own.items():
        kind = str(annotation).removeprefix("typing.").removeprefix("dataclasses.")
        if kind.startswith("ClassVar"):
            continue
        if kind.startswith(("InitVar", "KW_ONLY")):
            raise TypeError(f"{cls.__qualname__}.{name}: {kind} is not supported")
        given = cls.__dict__.get(name, MISSING)
        spec = given if isinstance(given, Field) else Field(default=given)
        if isinstance(spec.default, list | dict | set):
            raise TypeError(f"{cls.__qualname__}.{name}: a mutable default needs a factory")
        if spec.default is MISSING and given is not MISSING:
            delattr(cls, name)  # a field(default_factory=...) is no class attribute
        elif isinstance(given, Field):
            setattr(cls, name, spec.default)
        fields[name] = spec
    for name, value in cls.__dict__.items():
        if isinstance(value, Field) and name not in own:
            raise TypeError(f"{cls.__qualname__}.{name} is a field but has no type annotation")
    taken = [name for name, spec in fields.items() if spec.init]
    defaulted = False
    for name in taken:
        has_default = fields[name].default is not MISSING or (
            fields[name].default_factory is not MISSING
        )
        if defaulted and not has_default:
            raise TypeError(f"{cls.__qualname__}.{name}: no default after a field with one")
        defaulted = defaulted or has_default
    setattr(cls, FIELDS, fields)
    class_hash = cls.__dict__.get("__hash__", MISSING)
    # A class that defines __eq__ gets __hash__ = None from Python: that is no hash of its own.
    own_hash = not (class_hash is MISSING or (class_hash is None and "__eq__" in cls.__dict__))
    methods: dict[str, Any] = {
        "__init__": _init(cls, fields),
        "__repr__": _repr([name for name, spec in fields.items() if spec.repr]),
        "__eq__": _eq([name for name, spec in fields.items() if spec.compare]),
        "__match_args__": tuple(taken),
    }
    if frozen:
        methods["__setattr__"], methods["__delattr__"] = _refusals(cls, fields)
    if not own_hash:  # mutable and compared by value: unhashable, as a dataclass is
        methods["__hash__"] = _hash([n for n, f in fields.items() if f.compare]) if frozen else None
    for name, method in methods.items():
        if name in cls.__dict__ and name != "__hash__":
            continue  # the class's own
        if callable(method):
            method.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, method)
    return cls


def _init(cls: type, fields: dict[str, Field]) -> Callable[..., None]:
    taken = tuple(name for name, spec in fields.items() if spec.init)
    known = frozenset(taken)
    order = tuple(fields.items())
    post_init = getattr(cls, "__post_init__", None) is not None
    qualname = cls.__qualname__
    required = sum(
        1
        for name in taken
        if fields[name].default is MISSING and fields[name].default_factory is MISSING
    )
    # Python's words for a call with too many arguments (self counted)
    takes = f"{len(taken) + 1}"
    if required < len(taken):
        takes = f"from {required + 1} to {takes}"

    # What a call starts from, so that it makes each value with a few C-level dict updates
    # rather than a Python step per field (an update makes ~1,700 values): every field in
    # order with its plain default (None where a factory gives it or it has none: filled in
    # or removed below; a dict keeps a key's place when it is set again).
    start = {name: None if spec.default is MISSING else spec.default for name, spec in order}
    factories = tuple(
        (name, spec.default_factory) for name, spec in order if spec.default_factory is not MISSING
    )
    undefaulted = tuple(
        (name, spec.init)
        for name, spec in order
        if spec.default is MISSING and spec.default_factory is MISSING
    )
    position = {name: index for index, name in enumerate(taken)}
    beyond = len(taken)

    def checked(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Raise the TypeError Python raises for a call that does not fit the fields."""
        given = dict(zip(taken, args, strict=False))
        for name in kwargs:
            if name not in known:
                raise TypeError(
                    f"{qualname}.__init__() got an unexpected keyword argument {name!r}"
                )
            if name in given:
                raise TypeError(f"{qualname}.__init__() got multiple values for argument {name!r}")
            given[name] = kwargs[name]
        for name, init in undefaulted:
            if init and name not in given:
                raise TypeError(
                    f"{qualname}.__init__() missing 1 required positional argument: {name!r}"
                )

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        count = len(args)
        if count > beyond:
            raise TypeError(
                f"{qualname}.__init__() takes {takes} positional arguments "
                f"but {count + 1} were given"
            )
        if kwargs and (
            not known.issuperset(kwargs) or any(position[name] < count for name in kwargs)
        ):
            checked(args, kwargs)
        own = self.__dict__
        own.update(start)
        own.update(zip(taken, args, strict=False))
        if kwargs:
            own.update(kwargs)
        for name, factory in factories:
            if position.get(name, beyond) >= count and name not in kwargs:
                own[name] = factory()
        for name, init in undefaulted:
            if position.get(name, beyond) >= count and name not in kwargs:
                if init:
                    checked(args, kwargs)
                del own[name]
        if post_init:
            self.__post_init__()

    return __init__


def _repr(names: list[str]) -> Callable[[Any], str]:
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__qualname__}({shown})"

    return __repr__


def _eq(names: list[str]) -> Callable[[Any, object], bool]:
    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        mine = tuple(getattr(self, name) for name in names)
        return mine == tuple(getattr(other, name) for name in names)

    return __eq__


def _hash(names: list[str]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(tuple(getattr(self, name) for name in names))

    return __hash__


def _refusals(
    cls: type, fields: dict[str, Field]
) -> tuple[Callable[[Any, str, Any], None], Callable[[Any, str], None]]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in fields:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        object.__setattr__(self, name, value)  # no value class sets one

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in fields:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        object.__delattr__(self, name)

    return __setattr__, __delattr__


def replace(value: _V, /, **changes: Any) -> _V:
    """A copy of ``value`` with ``changes`` (as ``dataclasses.replace``): the fields
    ``__init__`` takes are passed again, those it does not are made again by it."""
    fields: dict[str, Field] = getattr(type(value), FIELDS)
    for name, spec in fields.items():
        if not spec.init:
            if name in changes:
                raise ValueError(f"field {name!r} is not taken by __init__ and cannot be replaced")
            continue
        if name not in changes:
            changes[name] = getattr(value, name)
    return type(value)(**changes)
