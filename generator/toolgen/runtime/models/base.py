# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Base models, the tool registry entry and validation errors shared by the generated modules."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pydantic
from pydantic.alias_generators import to_camel

from ..schema.keywords import map_subschemas
from ..wires.export import canonical_definition


class CanonicalModel(pydantic.BaseModel):
    """Canonical chat types: immutable, snake_case attributes, camelCase accepted on input too."""

    model_config = pydantic.ConfigDict(
        frozen=True,
        # Validators are built on first use, not at import: a package of many models imports fast.
        defer_build=True,
        strict=True,
        extra="forbid",
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=False,
        # Error locations use the schema's (snake_case) names even when the input used camelCase.
        loc_by_alias=False,
        protected_namespaces=(),
        regex_engine="python-re",
    )


class SchemaModel(pydantic.BaseModel):
    """Models of tool arguments and results: immutable, keys exactly as the schema spells them."""

    model_config = pydantic.ConfigDict(
        frozen=True,
        defer_build=True,
        strict=True,
        extra="allow",
        protected_namespaces=(),
        # Python's re is closer to the ECMA-262 patterns schemas use (lookarounds) and has no size cap.
        regex_engine="python-re",
    )


_NOT_NULL_KEY = "x-toolgen-not-null"


class NullRefusingModel(SchemaModel):
    """A SchemaModel whose optional fields refuse an explicit null where the schema does not allow one.

    The generator lists those properties in json_schema_extra; they move to a class attribute here, so
    they do not show up in model_json_schema().
    """

    toolgen_not_null: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        extra = cls.model_config.get("json_schema_extra")
        if isinstance(extra, dict) and _NOT_NULL_KEY in extra:
            listed = extra.pop(_NOT_NULL_KEY)
            names = set(listed) if isinstance(listed, list) else set()
            cls.toolgen_not_null = frozenset(
                field
                for field, info in cls.model_fields.items()
                if (info.alias or field) in names
            )

    # After, not before: pydantic refuses a before validator on a field that tells a union apart.
    @pydantic.field_validator("*", mode="after")
    @classmethod
    def _refuse_null(cls, value: Any, info: pydantic.ValidationInfo) -> Any:
        if value is None and info.field_name in cls.toolgen_not_null:
            raise ValueError("should not be null; leave the field out instead")
        return value


class FunctionCallBase(CanonicalModel):
    """A function call whose `arguments` is the raw JSON text the model produced."""

    arguments: str

    def parsed_arguments(self) -> Any:
        """The arguments as JSON data; raises ToolgenValidationError when the text is not JSON."""
        try:
            return json.loads(self.arguments)
        except json.JSONDecodeError as error:
            problem = ValidationProblem(
                "/function/arguments",
                f"is not valid JSON: {error.msg} at column {error.colno}",
            )
            raise ToolgenValidationError([problem]) from None


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its definition as data and the models of its arguments and result."""

    name: str
    title: str | None
    description: str | None
    args_model: type[pydantic.BaseModel]
    result_model: type[pydantic.BaseModel] | None
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None
    return_direct: bool = False
    timeout: float | None = None
    requires_approval: bool = False
    strict: bool | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    annotations: Mapping[str, Any] = field(default_factory=dict)
    # Decided at build time: the models do not enforce every keyword, so a JSON Schema check runs too.
    check_input: bool = False
    check_output: bool = False
    # The input schema as written, when the JSON Schema check must see it so ($id, anchors, $dynamicRef).
    check_schema: Mapping[str, Any] | None = None
    # Vendored documents the schema as written refers to (URI -> document): the check never fetches anything.
    check_resources: Mapping[str, Any] = field(default_factory=dict)
    # The draft each check reads its schema as (`input`/`output` -> `$schema`), when not 2020-12.
    dialects: Mapping[str, str] = field(default_factory=dict)
    _schema_validators: dict[str, Any] = field(
        default_factory=dict, repr=False, compare=False
    )

    def check_arguments(self, data: Any) -> Any:
        """The arguments (JSON text or data) as the args model, or ToolgenValidationError listing every problem.

        A value the input schema accepts but the args model cannot hold (a non-object, where the schema has
        `properties` but no `type`) comes back as the JSON data itself: validity is the schema's to decide.
        """
        value = _parsed(data) if isinstance(data, (str, bytes, bytearray)) else data
        # The model first: its sentences are the clearer ones; the schema check then covers what it cannot see.
        try:
            args = check(self.args_model, value, json_text=False)
        except ToolgenValidationError:
            if self.check_input and not self._schema_problems(
                "input", self.check_schema or self.input_schema, value
            ):
                return value
            raise
        if self.check_input:
            problems = self._schema_problems(
                "input", self.check_schema or self.input_schema, value
            )
            if problems:
                raise ToolgenValidationError(problems)
        return args

    def check_result(self, data: Any) -> Any:
        """A handler's result as the result model (data as is when the tool has none), or ToolgenValidationError."""
        result = (
            data
            if self.result_model is None
            else check(self.result_model, data, json_text=False)
        )
        plain = (
            data.model_dump(mode="json", by_alias=True)
            if isinstance(data, pydantic.BaseModel)
            else data
        )
        self.check_result_schema(plain)
        return result

    def check_result_schema(self, data: Any) -> Any:
        """The JSON Schema check of a result (JSON data) where the models do not enforce every keyword."""
        if self.check_output and self.output_schema is not None:
            problems = self._schema_problems("output", self.output_schema, data)
            if problems:
                raise ToolgenValidationError(problems)
        return data

    def _schema_problems(
        self, which: str, schema: Mapping[str, Any], value: Any
    ) -> list[ValidationProblem]:
        validator = self._schema_validators.get(which)
        if validator is None:
            try:
                validator = schema_validator(
                    schema, self.check_resources, self.dialects.get(which)
                )
                self._schema_validators[which] = validator
            except Exception as error:  # noqa: BLE001 - a schema the check cannot take must not crash a dispatch
                return [
                    ValidationProblem(
                        "", f"could not be checked against its schema: {error}"
                    )
                ]
        return schema_problems(validator, value)

    def definition(self) -> dict[str, Any]:
        """The tool in toolgen's canonical definition format (camelCase keys, absent values left out)."""
        return canonical_definition(
            name=self.name,
            title=self.title,
            description=self.description,
            inputSchema=self.input_schema,
            outputSchema=self.output_schema,
            returnDirect=self.return_direct,
            timeout=self.timeout,
            requiresApproval=self.requires_approval,
            strict=self.strict,
            meta=dict(self.meta),
            annotations=dict(self.annotations),
        )


@dataclass(frozen=True)
class ValidationProblem:
    """One problem: where (a JSON pointer into the input) and what, in a plain sentence."""

    pointer: str
    message: str

    def __str__(self) -> str:
        return f"{self.pointer or '(root)'}: {self.message}"


class ToolgenValidationError(ValueError):
    """Raised by every validator; `problems` lists each problem found, not only the first."""

    def __init__(self, problems: Sequence[ValidationProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__(self.problems)

    def __str__(self) -> str:
        # Written when shown, not when raised: a validator that is caught and reported pays nothing for it.
        listing = "\n".join(f"  {p}" for p in self.problems)
        count = len(self.problems)
        return f"{count} validation problem{'s' if count != 1 else ''}:\n{listing}"


def _escape(part: object) -> str:
    return str(part).replace("~", "~0").replace("/", "~1")


def _data_path(
    data: Any, loc: Sequence[int | str], kind: str
) -> tuple[list[str], list[tuple[int, str]]]:
    """Split a pydantic error location into the path through the data and the union branch labels it passed."""
    path: list[str] = []
    branches: list[tuple[int, str]] = []
    current = data
    last = len(loc) - 1
    for index, part in enumerate(loc):
        # type() first: dict and list are what JSON data holds, and the general checks cost more.
        kind_of = type(current)
        if type(part) is str and (
            kind_of is dict or (kind_of is not list and isinstance(current, Mapping))
        ):
            key = part if part in current else _camel_key(part, current)
            if key is not None:
                current = current[key]
                path.append(key)
                continue
        elif type(part) is int and (kind_of is list or kind_of is tuple):
            current = current[part] if 0 <= part < len(current) else None
            path.append(str(part))
            continue
        if kind == "missing" and index == last:
            path.append(str(part))
        else:
            branches.append((len(path), str(part)))
    return path, branches


def _camel_key(part: str, current: Mapping[str, Any]) -> str | None:
    if "_" not in part:
        return None
    if part.startswith("_") or part.endswith("_") or "__" in part:
        return None  # to_camel keeps these as they are; the key is the name itself
    # to_camel for the snake_case names the canonical models use, without its regular expressions.
    head, _, rest = part.partition("_")
    camel = head + rest.title().replace("_", "")
    return camel if camel in current else None


def _sentence(error: Mapping[str, Any]) -> str:
    reason = _reason(error)
    if error["type"] in ("missing", "extra_forbidden"):
        return reason
    return f"{reason} (got {_shown(error.get('input'))})"


def _reason(error: Mapping[str, Any]) -> str:
    """What is wrong, without the value that was given."""
    kind = error["type"]
    if kind == "missing":
        return "is required but missing"
    if kind == "extra_forbidden":
        return "is not an allowed field"
    message = str(error["msg"])
    if message.startswith("Input should be "):
        return "should be " + message[len("Input should be ") :]
    if message.startswith("Value error, "):
        return message[len("Value error, ") :]
    return message


# One encoder for every error sentence: json.dumps with options builds a new encoder on each call.
_SHOW = json.JSONEncoder(ensure_ascii=False, default=repr)


def _shown(value: Any) -> str:
    kind = type(value)
    if kind is int or (kind is float and math.isfinite(value)):
        return repr(value)
    if value is None or kind is bool:
        return "null" if value is None else "true" if value else "false"
    text = _SHOW.encode(value)
    return text if len(text) <= 60 else text[:57] + "..."


_TAG_ERRORS = frozenset({"union_tag_invalid", "union_tag_not_found"})


def problems_from(
    error: pydantic.ValidationError,
    data: Any,
    items: Sequence[Mapping[str, Any]] | None = None,
) -> list[ValidationProblem]:
    """Pydantic's errors (`items`, when the caller has them already) as JSON-pointer problems: one per real
    problem, union branches folded."""
    items = error.errors(include_url=False) if items is None else items
    if len(items) == 1 and items[0]["type"] not in _TAG_ERRORS:
        # One error: whatever union branches it passed through, they are the ones that were tried.
        item = items[0]
        path, _ = _data_path(data, item["loc"], item["type"])
        return [_problem(path, item)]
    found: list[tuple[list[str], list[tuple[int, str]], Mapping[str, Any]]] = []
    for item in items:
        kind = item["type"]
        path, branches = _data_path(data, item["loc"], kind)
        if kind in _TAG_ERRORS:
            key, tag = _tag_key(
                str(item.get("ctx", {}).get("discriminator", "")), data, path
            )
            expected = item.get("ctx", {}).get("expected_tags")
            if kind == "union_tag_invalid":
                text = f"must be one of {expected} (got {_shown(tag)})"
            else:
                text = "is required to tell which kind of object this is"
            found.append(
                ([*path, key], [], {"type": "custom", "msg": text, "sentence": text})
            )
            continue
        found.append((path, branches, item))
    return _fold_unions(found)


def _tag_key(discriminator: str, data: Any, path: list[str]) -> tuple[str, Any]:
    """The property that tells a union apart, as the data spells it, and its value there (None when absent).

    pydantic names a field with an alias `'pet_type' | 'pet-type'`: the field's name, then the JSON name;
    the alias comes first here, as JSON data spells it.
    """
    inner = (
        discriminator[1:-1]
        if len(discriminator) > 1 and discriminator[0] == discriminator[-1] == "'"
        else ""
    )
    names = inner.split("' | '")[::-1] if inner else [discriminator]
    current = data
    for part in path:
        if isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            current = current.get(part) if isinstance(current, dict) else None
    for name in names:
        if isinstance(current, dict) and name in current:
            return name, current[name]
    return names[0], None


Found = tuple[list[str], list[tuple[int, str]], Mapping[str, Any]]


def _fold_unions(found: Iterable[Found]) -> list[ValidationProblem]:
    """Keep the errors of the union branch that got furthest into the data; report a total miss once."""
    problems = _folded(list(found))
    if len(problems) == 1:
        return problems
    unique = {(p.pointer, p.message): p for p in problems}
    return sorted(unique.values(), key=lambda p: (p.pointer, p.message))


def _folded(found: list[Found], level: int = 0) -> list[ValidationProblem]:
    """Fold the union branches from the `level`-th one on (entries are shared, not copied, on the way down)."""
    if len(found) == 1:
        return [
            _problem(found[0][0], found[0][2])
        ]  # one error left: the branches it passed are the ones tried
    problems: list[ValidationProblem] = []
    groups: dict[tuple[str, ...], list[Found]] = {}
    for entry in found:
        path, branches, item = entry
        if len(branches) > level:
            groups.setdefault(tuple(path[: branches[level][0]]), []).append(entry)
        else:
            problems.append(_problem(path, item))
    for prefix, members in groups.items():
        if len({branches[level][1] for _, branches, _ in members}) == 1:
            # One branch tried (a discriminated union, or one candidate left): its errors are the errors.
            problems.extend(_folded(members, level + 1))
            continue
        deepest = max(len(path) for path, _, _ in members)
        if deepest == len(prefix):
            reasons = sorted({_reason(item) for _, _, item in members})
            pointer = "".join("/" + _escape(p) for p in prefix)
            problems.append(
                ValidationProblem(
                    pointer,
                    "matches none of the allowed forms: " + "; or ".join(reasons),
                )
            )
            continue
        chosen = next(
            branches[level][1] for path, branches, _ in members if len(path) == deepest
        )
        problems.extend(
            _folded([m for m in members if m[1][level][1] == chosen], level + 1)
        )
    return problems


def _problem(path: list[str], item: Mapping[str, Any]) -> ValidationProblem:
    sentence = str(item["sentence"]) if "sentence" in item else _sentence(item)
    return ValidationProblem(_json_pointer(path), sentence)


def _json_pointer(path: list[str]) -> str:
    if not path:
        return ""
    joined = "/".join(path)
    if "~" not in joined and joined.count("/") == len(path) - 1:
        return "/" + joined  # no part holds a `/` or `~`: nothing to escape
    return "".join("/" + _escape(p) for p in path)


def _parsed(data: str | bytes | bytearray) -> Any:
    try:
        return json.loads(data)
    except json.JSONDecodeError as error:
        problem = ValidationProblem(
            "",
            f"is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}",
        )
        raise ToolgenValidationError([problem]) from None
    except UnicodeDecodeError as error:
        raise ToolgenValidationError(
            [ValidationProblem("", f"is not UTF-8 text (byte {error.start})")]
        ) from None


# Where a schema whose patterns were translated for Python keeps their originals (an unknown keyword to checks).
_ECMA_ORIGINALS = "x-toolgen-ecma-patterns"


def schema_validator(
    schema: Mapping[str, Any],
    resources: Mapping[str, Any] | None = None,
    dialect: str | None = None,
) -> Any:
    """A validator from the jsonschema package for `schema` (its declared draft, else `dialect`, else 2020-12).

    References resolve inside `schema`, to `resources` (URI -> document) and to the published meta-schemas, and
    nowhere else: a reference to anything more is a problem of the check, never a fetch over the network.
    """
    # Imported here: only tools whose models do not enforce every keyword need jsonschema.
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012, specification_with

    fallback = (
        validator_for({"$schema": dialect}, default=Draft202012Validator)
        if dialect
        else Draft202012Validator
    )
    validator = validator_for(schema, default=fallback)
    from ..schema.ecma_regex import (
        python_documents,
    )  # rarely needed, so not imported with the package

    documents: dict[str, Any] = dict(resources or {})
    # Python's re has no \p{...}: General_Category escapes become explicit ranges first (the models skip them).
    translated = python_documents([schema, *documents.values()])
    if translated is not None:
        rewritten, originals = translated
        # Error sentences that quote a pattern (additionalProperties lists them) show it as written.
        schema = (
            {**rewritten[0], _ECMA_ORIGINALS: originals}
            if isinstance(rewritten[0], dict)
            else rewritten[0]
        )
        documents = dict(zip(documents, rewritten[1:], strict=True))
    # jsonschema reports a `false` subschema's error without its place; `{"not": {}}` refuses the same values
    # and is reported where it applies.
    schema = _false_spelled_out(schema)
    documents = {
        uri: _false_spelled_out(document) for uri, document in documents.items()
    }
    # A document that does not name its draft is read as the schema's own.
    own = specification_with(
        str(validator.META_SCHEMA.get("$schema", "")), default=DRAFT202012
    )
    loaded = [
        (uri, Resource.from_contents(document, own))
        for uri, document in documents.items()
    ]
    # An explicit registry has no retrieve function; jsonschema's default one would fetch unknown URIs.
    registry: Registry[Any] = Registry().with_resources(loaded).crawl()
    return validator(schema, registry=registry)


# Where jsonschema's own message for `false` says more than "is not allowed" (it names the key or item).
_FALSE_KEPT = ("propertyNames", "unevaluatedProperties", "unevaluatedItems")


def _false_spelled_out(schema: Any) -> Any:
    if schema is False:
        return {"not": {}}
    if not isinstance(schema, dict):
        return schema
    result = map_subschemas(schema, _false_spelled_out)
    for key in _FALSE_KEPT:
        if schema.get(key) is False:
            result[key] = False
    return result


def schema_problems(validator: Any, value: Any) -> list[ValidationProblem]:
    """Every place `value` breaks the validator's schema, in document order."""
    try:
        errors = sorted(
            validator.iter_errors(value),
            key=lambda e: tuple((isinstance(p, str), p) for p in e.absolute_path),
        )
    except Exception as error:  # noqa: BLE001 - a schema jsonschema cannot follow must not crash a dispatch
        return [
            ValidationProblem("", f"could not be checked against its schema: {error}")
        ]
    originals = (
        validator.schema.get(_ECMA_ORIGINALS)
        if isinstance(validator.schema, dict)
        else None
    )
    problems = [
        ValidationProblem(_pointer(error.absolute_path), _schema_sentence(error))
        for error in errors
    ]
    if originals:
        problems = [
            ValidationProblem(p.pointer, _with_originals(p.message, originals))
            for p in problems
        ]
    return problems


def _with_originals(message: str, originals: Mapping[str, str]) -> str:
    """`message` quoting each translated pattern as it was written (`\\p{Letter}`, not its ranges)."""
    for python, ecma in originals.items():
        message = message.replace(repr(python), repr(ecma))
    return message


def _pointer(path: Iterable[Any]) -> str:
    return "".join("/" + _escape(part) for part in path)


def _schema_sentence(error: Any) -> str:
    keyword = error.validator
    if keyword == "oneOf" and not error.context:
        return "matches more than one of the allowed shapes (oneOf wants exactly one)"
    if keyword in ("oneOf", "anyOf"):
        return "matches none of the allowed shapes"
    if keyword == "not":
        return (
            "is not allowed here"
            if error.validator_value == {}
            else "matches a shape that is not allowed here"
        )
    return str(error.message)


def check(
    model: type[pydantic.BaseModel] | pydantic.TypeAdapter[Any],
    data: Any,
    *,
    json_text: bool = True,
) -> Any:
    """Validate `data` against `model` (a model class, or an adapter of a union), strictly (no "5" for 5).

    Raises ToolgenValidationError. With `json_text`, a str or bytes is JSON text to parse first (as tool
    arguments arrive from a model); without it, a str is the value itself (a tool that returns a string).
    """
    value = (
        _parsed(data)
        if json_text and isinstance(data, (str, bytes, bytearray))
        else data
    )
    # The core validator directly: model_validate's own checks cost as much as validating a small message.
    validator = (
        model.validator
        if isinstance(model, pydantic.TypeAdapter)
        else model.__pydantic_validator__
    )
    try:
        return validator.validate_python(value, strict=True)
    except pydantic.ValidationError as error:
        items = error.errors(include_url=False)
        if any(
            e["type"] == "int_type" and _integral_float(e.get("input")) for e in items
        ):
            # JSON Schema counts 1.0 as an integer (models often write 5.0); strict pydantic does not.
            try:
                return validator.validate_python(
                    _integral_floats_as_ints(value), strict=True
                )
            except pydantic.ValidationError:
                pass  # the problems of the value as given are the ones to report
        raise ToolgenValidationError(problems_from(error, value, items)) from None
    except (TypeError, ArithmeticError) as error:
        # A constraint pydantic cannot apply to this value (multipleOf on a non-number): a problem, not a crash.
        raise ToolgenValidationError(
            [ValidationProblem("", f"could not be checked: {error}")]
        ) from None


def _integral_float(value: Any) -> bool:
    return type(value) is float and value.is_integer()


def _integral_floats_as_ints(value: Any) -> Any:
    """`value` with every float that has no fractional part written as an int (JSON Schema's integer)."""
    if _integral_float(value):
        return int(value)
    if isinstance(value, dict):
        return {key: _integral_floats_as_ints(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_integral_floats_as_ints(item) for item in value]
    return value
