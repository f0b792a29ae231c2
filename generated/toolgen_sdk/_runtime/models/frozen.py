# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Deep immutability of the generated models: read-only containers, and the field types that hold them.

A generated model is frozen, and so is every container it holds: a JSON array is a tuple, a JSON object a
FrozenDict (a dict whose mutating methods raise TypeError), at any depth, free-form values included.

The generated types say where: FrozenList[X] validates as list[X] does (the same errors; a tuple is taken too)
and then becomes a tuple, FrozenMap[K, V] validates as dict[K, V] and becomes a FrozenDict, FrozenAny takes any
value and freezes what it holds. Each converts only a container it was given, in a validator after pydantic's
own (a call of `tuple`, for a list), so a message without one costs nothing more, and schema/plain.py reads the
schema as the data it was. A length bound goes on the list or dict itself (FrozenSize), where Field's would
have gone: its errors and JSON Schema are those of list[X] and dict[K, V].

Written, a tuple is a list and a FrozenDict a dict: model_dump and model_dump_json give what they gave. Type
checkers read FrozenList[X] as Sequence[X], FrozenMap[K, V] as Mapping[K, V] and FrozenAny as Any, so a list or
a dict is still accepted where a model is built. `model_copy(update=...)` is the way to change a model (it
freezes what it is given; models/base.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    NoReturn,
    TypeAlias,
    TypeVar,
    cast,
    get_args,
)

from pydantic_core import core_schema

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


class FrozenDict(dict[K, V]):
    """A JSON object that cannot change in place: a dict (so json.dumps, pydantic and `isinstance(x, dict)` take
    it, and it equals the dict of the same items) whose mutating methods raise TypeError. `dict(d)` or `d | {...}`
    gives a new, mutable dict. Its values are frozen as it is made."""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> FrozenDict[K, V]:
        made = dict.__new__(cls)
        items = dict(*args, **kwargs).items()
        dict.update(made, ((key, frozen(value)) for key, value in items))
        return made

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Filled by __new__: calling __init__ again changes nothing."""

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(
            f"'{type(self).__name__}' object cannot be changed in place;"
            " make a new model with model_copy(update=...)"
        )

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    @classmethod
    def fromkeys(
        cls, iterable: Iterable[Any], value: Any = None
    ) -> FrozenDict[Any, Any]:
        return cls(dict.fromkeys(iterable, value))

    def __reduce__(self) -> tuple[Any, ...]:
        # The default for a dict subclass would fill a new one item by item, which __setitem__ refuses.
        return (type(self), (dict(self),))

    def __copy__(self) -> FrozenDict[K, V]:
        return self

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))


def frozen(value: Any) -> Any:
    """`value` with every list a tuple, every dict a FrozenDict and every set a frozenset, at any depth; models
    (frozen themselves) and anything else as they are. A value that holds itself is a ValueError."""
    kind = type(value)
    # Flat values, the usual ones, without the walk.
    if (kind is list or kind is tuple) and not any(map(_thaws, value)):
        return tuple(value)
    if kind is dict and not any(map(_thaws, value.values())):
        return frozen_dict(value)
    return _rebuilt(value, _thaws, _freeze) if _thaws(value) else value


def _thaws(value: Any) -> bool:
    """Whether frozen() has to look into `value`: a list, dict, tuple or set (a FrozenDict is frozen already)."""
    kind = type(value)
    if kind is tuple or kind is list or kind is dict or kind is set:
        return True
    return isinstance(value, (list, dict, set)) and kind is not FrozenDict


def _freeze(value: Any, items: Iterable[Any]) -> Any:
    if isinstance(value, dict):
        made: FrozenDict[Any, Any] = dict.__new__(FrozenDict)
        dict.update(made, zip(value, items, strict=True))
        return made
    return frozenset(value) if isinstance(value, set) else tuple(items)


def frozen_dict(value: dict[Any, Any]) -> FrozenDict[Any, Any]:
    """A validated dict as a FrozenDict: its values are frozen by their own types already."""
    made: FrozenDict[Any, Any] = dict.__new__(FrozenDict)
    dict.update(made, value)
    return made


def thawed(value: Any) -> Any:
    """`value` with every tuple a list and every FrozenDict a dict again (and the lists and dicts around them
    new ones), at any depth: JSON data as pydantic writes it in Python mode."""
    kind = type(value)
    if (kind is tuple or kind is list) and not any(map(_freezes, value)):
        return list(value)
    if kind is FrozenDict and not any(map(_freezes, value.values())):
        return dict(value)
    return _rebuilt(value, _freezes, _thaw) if _freezes(value) else value


def _freezes(value: Any) -> bool:
    kind = type(value)
    return kind is tuple or kind is list or isinstance(value, (dict, list))


def _thaw(value: Any, items: Iterable[Any]) -> Any:
    if isinstance(value, dict):
        return dict(zip(value, items, strict=True))
    return list(items)


def _rebuilt(
    value: Any,
    opens: Callable[[Any], bool],
    rebuild: Callable[[Any, Iterable[Any]], Any],
) -> Any:
    """`value` rebuilt from the bottom up: each container that `opens` by `rebuild` from its items (a dict's
    values) as rebuilt. Walked without recursion: data nested a thousand levels is no RecursionError."""
    done: dict[int, Any] = {}
    entered: set[int] = set()
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        current, ready = stack.pop()
        key = id(current)
        if key in done:
            continue
        # A set's items are hashable, so no list or dict: it is rebuilt whole.
        items = (
            ()
            if isinstance(current, set)
            else current.values()
            if isinstance(current, dict)
            else current
        )
        if ready:
            done[key] = rebuild(
                current, [done[id(i)] if opens(i) else i for i in items]
            )
            continue
        if key in entered:
            raise ValueError("a value that holds itself cannot be frozen")
        entered.add(key)
        stack.append((current, True))
        stack.extend((item, False) for item in items if opens(item))
    return done[id(value)]


def _thawed_python(value: Any, info: core_schema.SerializationInfo) -> Any:
    # JSON mode writes tuples and dicts as arrays and objects already.
    return value if info.mode_is_json() else thawed(value)


class _AsList:
    """FrozenList's schema: list[X]'s own, lax only in taking a tuple (or another sequence) as well as a list,
    then a tuple; written as a list."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        (item,) = get_args(source) or (Any,)
        item = FrozenAny if item is Any else item  # what its items hold is frozen too
        return core_schema.no_info_after_validator_function(
            tuple,
            core_schema.list_schema(handler.generate_schema(item), strict=False),
            serialization=core_schema.plain_serializer_function_ser_schema(
                list,
                return_schema=core_schema.list_schema(handler.generate_schema(item)),
            ),
        )

    def __repr__(self) -> str:
        return "FrozenList"


class _AsDict:
    """FrozenMap's schema: dict[K, V]'s own, taking any mapping (a FrozenDict among them), then a FrozenDict; a
    dict itself, it is written as one."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        key, value = get_args(source) or (str, Any)
        value = FrozenAny if value is Any else value
        return core_schema.no_info_after_validator_function(
            frozen_dict,
            core_schema.dict_schema(
                handler.generate_schema(key),
                handler.generate_schema(value),
                strict=False,
            ),
        )

    def __repr__(self) -> str:
        return "FrozenMap"


class _AsAny:
    """FrozenAny's schema: any value, frozen; written (in Python mode) with its tuples as lists and its
    FrozenDicts as dicts."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(
            frozen,
            core_schema.any_schema(),
            serialization=core_schema.plain_serializer_function_ser_schema(
                _thawed_python, info_arg=True
            ),
        )

    def __repr__(self) -> str:
        return "FrozenAny"


# The conversions above: each changes a valid value's form, never whether it is valid.
FREEZING = (tuple, frozen_dict, frozen)


@dataclass(frozen=True)
class FrozenSize:
    """A FrozenList's or FrozenMap's length bounds, on the list or dict it validates as (where Field's
    min_length and max_length went on list[X]), not on the tuple it becomes, which pydantic would check in a
    function of its own with errors of its own."""

    min_length: int | None = None
    max_length: int | None = None

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return cast(core_schema.CoreSchema, self._bounded(dict(handler(source))))

    def _bounded(self, schema: dict[str, Any]) -> dict[str, Any]:
        kind = schema.get("type")
        if kind in ("list", "dict"):
            bounds = {"min_length": self.min_length, "max_length": self.max_length}
            return schema | {key: n for key, n in bounds.items() if n is not None}
        function = schema.get("function")
        converts = isinstance(function, dict) and function.get("function") in FREEZING
        if kind == "nullable" or (kind == "function-after" and converts):
            return schema | {"schema": self._bounded(dict(schema["schema"]))}
        raise TypeError(
            f"FrozenSize bounds a FrozenList or a FrozenMap, not a {kind} schema"
        )


# A JSON array: a tuple once validated (list[X] before).
FrozenList: TypeAlias = Annotated[Sequence[T], _AsList()]
# A JSON object: a FrozenDict once validated (dict[K, V] before).
FrozenMap: TypeAlias = Annotated[Mapping[K, V], _AsDict()]
# A value of any type, its containers frozen (Any before).
FrozenAny: TypeAlias = Annotated[Any, _AsAny()]
