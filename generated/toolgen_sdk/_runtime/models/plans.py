# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Folded problems planned once per shape of pydantic's errors, so that a repeated shape is not folded again.

Most invalid data fails the way other data failed before: the same error types at the same locations, only the
values differ. A validator (a model class or a union's adapter) keeps, per shape, a plan made of data only: for
each error the route the fold's walk takes through the data (what it found at each part of the location), and
for each problem its pointer (with slots for the list indexes of one error's location), its sentence up to the
value it quotes and which error's input that is. The shape is each error's type, location (list indexes left
out when there is one error; the fold of several compares them) and pydantic's message (its context spelled
out), so a repeated shape costs that key, one dictionary look-up, the route's checks and the quoting.

A plan is used only where the data says what it said when the plan was made, at every step of every route;
elsewhere, and for shapes no plan is made for (a union's tag, more than MOST_SHAPE_ERRORS errors), the errors
are folded as if nothing were planned. Nothing here is ever turned into code: plans are tuples read by loops.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pydantic

from ..schema.sentences import shown
from .problems import ValidationProblem, problems_from

# The most shapes one validator keeps: past that, new shapes are folded every time, as without plans.
MOST_SHAPES = 100
# The most errors in a planned shape.
MOST_SHAPE_ERRORS = 4
# Where a model class or an adapter keeps its plans: (its validator, the plans).
PLANS_ATTRIBUTE = "__toolgen_problem_plans__"
# Error types whose sentence reads the data beyond the error's own input (the union's tag).
_UNPLANNED = frozenset({"union_tag_invalid", "union_tag_not_found"})
# A message longer than this is not kept in a key: a model's own check may quote data in it.
_LONGEST_MESSAGE = 500

# One step of a route, (code, position in the location, key, other key): what the value at the step must be.
_KEY = 0  # an object holding `key` and not `other` (the next part, which would make `key` a tag): go to `key`
_INDEX = 1  # an array longer than the location's index at the step: go to that item
_ABSENT = (
    2  # an object holding neither `key` nor `other` (its camelCase spelling): stay
)
_CAMEL = (
    3  # an object holding `other` (the camelCase spelling) and not `key`: go to `other`
)
_SCALAR = 4  # a string, number, boolean or null: stay
_ARRAY = 5  # an array, the location's part a name: stay
_OBJECT = 6  # an object, the location's part an index: stay
_END = 7  # a missing field's name: anything but an object that holds `other` (its camelCase) and not `key`
_END_CAMEL = 8  # a missing field's name said in camelCase: an object holding `other` and not `key`
_SCALARS = frozenset({str, int, float, bool, type(None)})

Step = tuple[int, int, Any, Any]
Route = tuple[Step, ...]
# A pointer as parts: text, or the position in the location of an index to write there.
Pointer = str | tuple[str | int, ...]
# Per problem: the problem itself (nothing of it varies), or (pointer, sentence head, quoted error or -1).
Made = ValidationProblem | tuple[Pointer, str, int]
# One error's plan: its route; several errors': the routes to check, each with the error whose location it reads
# (a route another one's steps begin with is left out: checking the longer checks it).
Plan = tuple[tuple[Any, ...], tuple[Made, ...]]
# The most single-error locations, indexes and all, whose plans a validator keeps written out.
MOST_LOCATIONS = 400


class Plans(dict[Any, "Plan | None"]):
    """A validator's plans by shape; `exact` holds, by the location itself (indexes and all) of a single error,
    its shape's plan with the pointer written: a location met again costs neither the shape nor the pointer."""

    __slots__ = ("exact",)

    def __init__(self) -> None:
        super().__init__()
        self.exact: dict[Any, Plan | None] = {}


# Stands for a shape not met yet (a shape met and not planned is None).
_UNSEEN: Any = ()
# A marker per error for a value the fold would quote: private-use characters, which no sentence holds.
_MARK = "\ue000{}\ue001"


def plans_of(owner: Any, validator: Any) -> Plans | None:
    """The plans `owner` (a model class or an adapter) keeps for `validator`; None where it cannot keep any.

    A subclass finds its base's plans by getattr, but they are its base validator's: it keeps its own, and a
    rebuilt validator (which may fail differently) starts anew.
    """
    kept = getattr(owner, PLANS_ATTRIBUTE, None)
    if kept is not None and kept[0] is validator:
        plans: Plans = kept[1]
        return plans
    plans = Plans()
    try:
        setattr(owner, PLANS_ATTRIBUTE, (validator, plans))
    except (TypeError, AttributeError):
        return None
    return plans


def planned_problems(
    error: pydantic.ValidationError,
    data: Any,
    items: Sequence[Mapping[str, Any]] | None,
    plans: Plans | None,
) -> list[ValidationProblem]:
    """problems_from(error, data), from the plan of the errors' shape where there is one that fits the data.

    `items` are pydantic's errors without their contexts (the messages say them), None when there are too many.
    """
    if items is None or plans is None or not 0 < len(items) <= MOST_SHAPE_ERRORS:
        return problems_from(error, data)
    if len(items) == 1:
        # One error, most invalid data: planned, checked and quoted here, without the general path's loops.
        item = items[0]
        loc = item["loc"]
        exact = plans.exact
        key: Any = (item["type"], loc, item["msg"])
        plan = exact.get(key, _UNSEEN)
        if plan is _UNSEEN:
            # One error's shape leaves its indexes out (its pointer has slots for them): one plan for them all,
            # kept for this very location with its pointer written.
            shape = loc if int not in map(type, loc) else _without_indexes(loc)
            shaped = (item["type"], shape, item["msg"])
            plan = plans.get(shaped, _UNSEEN)
            if plan is _UNSEEN:
                return _learnt(error, data, plans, shaped)
            plan = _located(plan, loc)
            if len(exact) < MOST_LOCATIONS:
                exact[key] = plan
        if plan is None or not _follows(plan[0][0], data, loc):
            return problems_from(error, data)
        entry = plan[1][0]
        if type(entry) is ValidationProblem:
            return [entry]
        pointer, head, quoted = entry
        problem: ValidationProblem = _new_object(ValidationProblem)
        fields = problem.__dict__
        fields["pointer"] = pointer
        fields["message"] = head + shown(item["input"])
        return [problem]
    if len(items) == 2:
        # Two errors, the usual `str | list` miss: written out, without a comprehension's own frame.
        first, second = items
        key = (
            (first["type"], first["loc"], first["msg"]),
            (second["type"], second["loc"], second["msg"]),
        )
    else:
        key = tuple([(item["type"], item["loc"], item["msg"]) for item in items])
    plan = plans.get(key, _UNSEEN)
    if plan is None:
        return problems_from(error, data)
    if plan is _UNSEEN:
        return _learnt(error, data, plans, key)
    checks, made = plan
    for route, at in checks:
        if not _follows(route, data, items[at]["loc"]):
            return problems_from(error, data)
    problems = []
    for entry in made:
        if type(entry) is ValidationProblem:
            problems.append(entry)
            continue
        pointer, head, quoted = entry
        problem = _new_object(ValidationProblem)
        fields = problem.__dict__
        fields["pointer"] = pointer
        fields["message"] = head if quoted < 0 else head + shown(items[quoted]["input"])
        problems.append(problem)
    return problems


_new_object = object.__new__


def _without_indexes(loc: Sequence[Any]) -> tuple[Any, ...]:
    return tuple([-1 if type(part) is int else part for part in loc])


def _located(plan: Plan | None, loc: Sequence[Any]) -> Plan | None:
    """A single error's plan with its pointer written for `loc` (and its problem made, when it quotes nothing)."""
    if plan is None:
        return None
    entry = plan[1][0]
    if type(entry) is ValidationProblem:
        return plan
    pointer, head, quoted = entry  # type: ignore[misc]
    written = _written(pointer, loc)
    if quoted < 0:
        return plan[0], (ValidationProblem(written, head),)
    return plan[0], ((written, head, quoted),)


def _follows(route: Route, data: Any, loc: Sequence[Any]) -> bool:
    """Whether the fold's walk along `loc` through `data` decides at every step as it did for the plan."""
    value = data
    # The step codes are literals here, in the order they are most often met: a global per test costs more.
    for code, at, key, other in route:
        if code == 0:  # _KEY
            if type(value) is not dict or key not in value or other in value:
                return False
            value = value[key]
        elif code == 2:  # _ABSENT
            if type(value) is not dict or key in value or other in value:
                return False
        elif code == 1:  # _INDEX
            if type(value) is not list or loc[at] >= len(value):
                return False
            value = value[loc[at]]
        elif code == 4:  # _SCALAR
            if type(value) not in _SCALARS:
                return False
        elif code in (3, 8):  # _CAMEL, _END_CAMEL
            if type(value) is not dict or key in value or other not in value:
                return False
            value = value.get(other)
        elif code == 5:  # _ARRAY
            if type(value) is not list:
                return False
        elif code == 6:  # _OBJECT
            if type(value) is not dict:
                return False
        else:  # _END
            kind = type(value)
            if kind is dict:
                if key not in value and other in value:
                    return False
            elif kind is not list and kind not in _SCALARS:
                return False
    return True


# Stands for a key no dictionary holds: a step with no other key to check tests this one.
_NO_KEY = object()


def _learnt(
    error: pydantic.ValidationError, data: Any, plans: Plans, key: Any
) -> list[ValidationProblem]:
    """The problems of `error` on `data`, folded; its shape planned in `plans` while they have room."""
    items = error.errors(include_url=False)
    problems = problems_from(error, data, items)
    if len(plans) < MOST_SHAPES:
        plan = _plan(data, items, problems)
        if plan is not _UNSEEN:
            plans[key] = plan
    return problems


def _plan(
    data: Any, items: Sequence[Mapping[str, Any]], problems: list[ValidationProblem]
) -> Any:
    """The plan of `items` on `data`; None for a shape no plan is made for, _UNSEEN for data to plan it from."""
    if any(
        item["type"] in _UNPLANNED or len(str(item.get("msg", ""))) > _LONGEST_MESSAGE
        for item in items
    ):
        return None
    single = len(items) == 1
    routes = []
    pointer: Pointer = ""
    for item in items:
        walked = _route(data, item["loc"], item["type"], single)
        if walked is None:
            return _UNSEEN  # data the routes do not cover: another meeting may plan the shape
        routes.append(walked[0])
        pointer = walked[1]
    made = _texts(data, items, problems)
    if made is None:
        return None
    if single:
        head, quoted = made[0]
        if _written(pointer, items[0]["loc"]) != problems[0].pointer:
            return None
        if type(pointer) is str and quoted < 0:
            return tuple(routes), (problems[0],)
        return tuple(routes), ((pointer, head, quoted),)
    entries: list[Made] = []
    for (head, quoted), problem in zip(made, problems, strict=True):
        entries.append(problem if quoted < 0 else (problem.pointer, head, quoted))
    return _checks(routes, [item["loc"] for item in items]), tuple(entries)


def _checks(
    routes: Sequence[Route], locs: Sequence[Sequence[Any]]
) -> tuple[tuple[Route, int], ...]:
    """The routes of several errors to check, each with the error whose location it reads its indexes from, less
    each one whose steps (its indexes read) another's begin with, or that an earlier one repeats."""
    read = [
        [
            (code, at, key, other, loc[at] if code == _INDEX else None)
            for code, at, key, other in route
        ]
        for route, loc in zip(routes, locs, strict=True)
    ]
    kept = []
    for at, steps in enumerate(read):
        implied = any(
            other != at
            and len(steps) <= len(longer)
            and longer[: len(steps)] == steps
            and (len(steps) < len(longer) or other < at)
            for other, longer in enumerate(read)
        )
        if not implied:
            kept.append((routes[at], at))
    return tuple(kept)


def _written(pointer: Pointer, loc: Sequence[Any]) -> str:
    if isinstance(pointer, str):
        return pointer
    return "".join([p if isinstance(p, str) else str(loc[p]) for p in pointer])


def _texts(
    data: Any, items: Sequence[Mapping[str, Any]], problems: list[ValidationProblem]
) -> list[tuple[str, int]] | None:
    """Each problem's sentence with its quoted value left out, and whose input it quotes (-1: none); None when
    a sentence uses a value otherwise, or the problems would sort by their values."""
    marked = [{**item, "input": _MARK.format(at)} for at, item in enumerate(items)]
    templates = problems_from(None, data, marked)  # type: ignore[arg-type]
    pointers = [p.pointer for p in templates]
    if len(templates) != len(problems) or len(set(pointers)) != len(pointers):
        return None
    made = []
    for template, problem in zip(templates, problems, strict=True):
        message, quoted = template.message, -1
        for at in range(len(items)):
            mark = shown(_MARK.format(at))
            if message.endswith(mark):
                message, quoted = message[: -len(mark)], at
                break
        if "\ue000" in message or "\ue001" in message:
            return None
        value = message if quoted < 0 else message + shown(items[quoted].get("input"))
        if template.pointer != problem.pointer or value != problem.message:
            return None
        made.append((message, quoted))
    return made


def _route(
    data: Any, loc: Sequence[Any], kind: str, single: bool
) -> tuple[Route, Pointer] | None:
    """The steps problems.py's walk (_one_path for one error, _data_path for several) takes along `loc`
    through `data`, and the pointer it makes (indexes as slots); None for data no plan is made from."""
    steps: list[Step] = []
    parts: list[str | int] = []
    value = data
    ends_missing = single and kind == "missing" and len(loc) > 0
    for at, part in enumerate(loc[:-1] if ends_missing else loc):
        kind_of = type(value)
        if kind_of is dict:
            if type(part) is not str:
                steps.append((_OBJECT, at, None, None))
                continue
            camel = _camel(part)
            if part in value:
                following = loc[at + 1] if at + 1 < len(loc) else None
                if type(following) is str and following in value:
                    return None  # the part may be a union's tag (problems._is_tag): not planned
                steps.append(
                    (_KEY, at, part, following if type(following) is str else _NO_KEY)
                )
                parts.append(part)
                value = value[part]
            elif camel is not None and camel in value:
                steps.append((_CAMEL, at, part, camel))
                parts.append(camel)
                value = value[camel]
            else:
                steps.append((_ABSENT, at, part, _NO_KEY if camel is None else camel))
        elif kind_of is list:
            if type(part) is int:
                if not 0 <= part < len(value):
                    return None
                steps.append((_INDEX, at, None, None))
                parts.append(at)
                value = value[part]
            else:
                steps.append((_ARRAY, at, None, None))
        elif kind_of in _SCALARS:
            steps.append((_SCALAR, at, None, None))
        else:
            return None  # another mapping or sequence: the walk's own checks decide
    if ends_missing:
        last = loc[-1]
        camel = _camel(last) if type(last) is str else None
        if type(value) is dict and camel is not None:
            if last not in value and camel in value:
                steps.append((_END_CAMEL, len(loc) - 1, last, camel))
                parts.append(camel)
            else:
                steps.append((_END, len(loc) - 1, last, camel))
                parts.append(last)
        elif type(value) is dict or type(value) is list or type(value) in _SCALARS:
            if camel is not None:
                steps.append((_END, len(loc) - 1, last, camel))
            parts.append(last if type(last) is str else len(loc) - 1)
        else:
            return None
    return tuple(steps), _pointer(parts)


def _pointer(parts: list[str | int]) -> Pointer:
    """The pointer of `parts` (keys, or positions of indexes in the location), its texts escaped and joined."""
    joined: list[str | int] = []
    for part in parts:
        if type(part) is int:
            joined.extend(("/", part))
            continue
        text = "/" + str(part).replace("~", "~0").replace("/", "~1")
        if joined and type(joined[-1]) is str:
            joined[-1] = str(joined[-1]) + text
        else:
            joined.append(text)
    if not joined:
        return ""
    if len(joined) == 1 and type(joined[0]) is str:
        return joined[0]
    return tuple(joined)


def _camel(part: str) -> str | None:
    """The camelCase key the walk tries for `part` where the name is not a key (problems._camel_key)."""
    if "_" not in part or part.startswith("_") or part.endswith("_") or "__" in part:
        return None
    head, _, rest = part.partition("_")
    return head + rest.title().replace("_", "")
