# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Pydantic bases of the generated models, and ToolSpec: one tool's definition, models and checks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, get_args

import pydantic
import pydantic_core
from pydantic.alias_generators import to_camel

from .check import (
    check,
    parsed_json,
    schema_accepts,
    schema_problems,
    schema_validator,
)
from .frozen import FrozenAny, frozen, frozen_dict, thawed
from .jsontext import nesting_problem, parse_json
from .lazy import DeferredModels
from .problems import ToolgenValidationError, ValidationProblem

if TYPE_CHECKING:
    # typing has Self from Python 3.11 on, as sync_driver says of Unpack.
    from typing import Self  # type: ignore[attr-defined,unused-ignore]


def _bounded_patterns(schema: pydantic_core.CoreSchema) -> pydantic_core.CoreSchema:
    """`schema` with each string pattern checked by Rust's linear regex, or in bounded time where it cannot run
    there (lookaround, backreferences): python-re, which the configs name for those, backtracks without a bound."""
    # Imported here, where a model is built (on first use), not with the package.
    from ..schema.core_patterns import bounded_core_schema

    bounded: pydantic_core.CoreSchema = bounded_core_schema(schema)
    return bounded


class FrozenModel(pydantic.BaseModel):
    """A frozen model whose containers are frozen too (frozen.py): every list a tuple, every dict a FrozenDict.

    Its fields' types freeze what they validate; what reaches a model without validation is frozen here.
    """

    if not TYPE_CHECKING:
        # Extra fields (extra="allow") are frozen too, and written back as JSON data. No default (pydantic's
        # documented `= Field(init=False)`): a class attribute would hide the slot, and the extras would move
        # into __dict__; hidden from type checkers, which would read it as an argument of every model.
        __pydantic_extra__: dict[str, FrozenAny]

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        _freeze_defaults(cls)

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[pydantic.BaseModel], handler: pydantic.GetCoreSchemaHandler, /
    ) -> pydantic_core.CoreSchema:
        """pydantic's schema, with its string patterns matched in bounded time (_bounded_patterns)."""
        return _bounded_patterns(handler(source))

    def model_copy(
        self, *, update: Mapping[str, Any] | None = None, deep: bool = False
    ) -> Self:
        """A copy with the fields of `update` changed (not validated, as pydantic's model_copy), frozen too."""
        return super().model_copy(update=_frozen_values(update), deep=deep)

    @classmethod
    def model_construct(
        cls, _fields_set: set[str] | None = None, **values: Any
    ) -> Self:
        """A model made from trusted data without validation (as pydantic's model_construct), frozen too."""
        return super().model_construct(_fields_set, **_frozen_values(values))

    @property
    def model_extra(self) -> dict[str, Any] | None:
        """The extra fields (extra="allow"), read-only."""
        extra = self.__pydantic_extra__
        return None if extra is None else frozen_dict(extra)


def _freeze_defaults(model: type[pydantic.BaseModel]) -> None:
    """A list or dict default frozen, as a value of the field would be: pydantic hands a default over as written
    (copied), unless it validates it, and then the field's type freezes it."""
    changed = False
    for info in model.__pydantic_fields__.values():
        default = info.default
        if not info.validate_default and isinstance(default, (list, dict, set)):
            info.default = frozen(default)
            changed = True
    if changed and model.__pydantic_complete__:
        # Built already (without defer_build): built again, with the frozen defaults.
        model.model_rebuild(force=True)


def _frozen_values(values: Mapping[str, Any] | None) -> dict[str, Any]:
    return {key: frozen(value) for key, value in (values or {}).items()}


class CanonicalModel(FrozenModel):
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


class SchemaModel(FrozenModel):
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


RootT = TypeVar("RootT")


class DeferredRootModel(pydantic.RootModel[RootT], Generic[RootT]):
    """RootModel, whose parametrized classes wait for first use too.

    `RootModel[list[Message]]` is a class of its own, made where a model names it as its base, and made with
    RootModel's config: without defer_build, it would build the whole validator of a conversation at import.
    """

    model_config = pydantic.ConfigDict(defer_build=True, frozen=True)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        _freeze_defaults(cls)

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[pydantic.BaseModel], handler: pydantic.GetCoreSchemaHandler, /
    ) -> pydantic_core.CoreSchema:
        """pydantic's schema, with its string patterns matched in bounded time (_bounded_patterns)."""
        return _bounded_patterns(handler(source))

    def model_copy(
        self, *, update: Mapping[str, Any] | None = None, deep: bool = False
    ) -> Self:
        """A copy with `update` (`{"root": ...}`) made, not validated, frozen (as FrozenModel's)."""
        return super().model_copy(update=_frozen_values(update), deep=deep)

    @classmethod
    def model_construct(  # type: ignore[override]  # RootModel's own signature
        cls, root: RootT, _fields_set: set[str] | None = None
    ) -> Self:
        """A model made from a trusted root without validation, frozen (as FrozenModel's)."""
        return super().model_construct(frozen(root), _fields_set)


_NOT_NULL_KEY = "x-toolgen-not-null"


class NullRefusingModel(SchemaModel):
    """A SchemaModel whose optional fields refuse an explicit null where the schema does not allow one.

    The generator lists those properties (by their JSON keys) in json_schema_extra; they move to a class
    attribute here, so they do not show up in model_json_schema().
    """

    # JSON keys, not attribute names: a field's alias is not known yet when a model that refers to a later
    # one is created, so keys are matched to fields when a value is validated.
    toolgen_not_null: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        extra = cls.model_config.get("json_schema_extra")
        if isinstance(extra, dict) and _NOT_NULL_KEY in extra:
            listed = extra.pop(_NOT_NULL_KEY)
            keys = listed if isinstance(listed, list) else []
            cls.toolgen_not_null = frozenset(k for k in keys if isinstance(k, str))

    # One validator around the whole model, not a field validator on every field: pydantic inspects a field
    # validator's signature and wraps the field's schema once per field, which made each class dearer to build
    # and each field dearer to validate. Valid input costs one scan of the listed keys.
    @pydantic.model_validator(mode="wrap")
    @classmethod
    def _refuse_null(
        cls, value: Any, handler: pydantic.ValidatorFunctionWrapHandler
    ) -> Any:
        if not cls.toolgen_not_null or not isinstance(value, dict):
            return handler(value)
        nulls = [
            key for key in _null_lookups(cls) if key in value and value[key] is None
        ]
        if not nulls:
            return handler(value)
        try:
            handler(value)
            errors: list[Any] = []
        except pydantic.ValidationError as error:
            errors = error.errors(include_url=False)
        raise _with_nulls(cls, errors, nulls) from None


def _null_lookups(model: type[NullRefusingModel]) -> tuple[str, ...]:
    """The input keys of the model's fields that refuse null: each field's alias, or its name without one.

    Found when a value is first validated (the fields are complete then), and kept on the class.
    """
    found = model.__dict__.get("_toolgen_null_lookups")
    if isinstance(found, tuple):
        return found
    lookups = tuple(
        field.alias or name
        for name, field in model.model_fields.items()
        if (field.alias or name) in model.toolgen_not_null
    )
    type.__setattr__(model, "_toolgen_null_lookups", lookups)
    return lookups


def _with_nulls(
    model: type[NullRefusingModel], errors: list[dict[str, Any]], nulls: list[str]
) -> pydantic.ValidationError:
    """The model's errors with a refusal for each null, where its field validator would have put it.

    A field whose type refuses null has its own error already; the others get the error a failing field
    validator gives (value_error at the field), and every error keeps its field's place.
    """
    erred = {error["loc"][0] for error in errors if error["loc"]}
    details = [_detail(error) for error in errors]
    for key in nulls:
        if key not in erred:
            refusal = ValueError(
                "a value other than null (leave the field out instead)"
            )
            details.append(
                {
                    "type": "value_error",
                    "loc": (key,),
                    "input": None,
                    "ctx": {"error": refusal},
                }
            )
    order = {
        field.alias or name: at
        for at, (name, field) in enumerate(model.model_fields.items())
    }
    details.sort(
        key=lambda detail: (
            order.get(detail["loc"][0], len(order)) if detail["loc"] else len(order)
        )
    )
    return pydantic.ValidationError.from_exception_data(model.__name__, details)  # type: ignore[arg-type]


def _detail(error: dict[str, Any]) -> dict[str, Any]:
    """An error of errors() as pydantic-core makes it again: the same type, place, input and message."""
    kind = error["type"]
    if kind not in _ERROR_TYPES:
        # Not one of pydantic-core's own: its sentence as written (no context, so nothing is filled in again).
        kind = pydantic_core.PydanticCustomError(kind, error["msg"])
        return {"type": kind, "loc": error["loc"], "input": error["input"]}
    detail = {"type": kind, "loc": error["loc"], "input": error["input"]}
    if "ctx" in error:
        detail["ctx"] = error["ctx"]
    return detail


_ERROR_TYPES = frozenset(get_args(pydantic_core.core_schema.ErrorType))


class FunctionCallBase(CanonicalModel):
    """A function call whose `arguments` is the raw JSON text the model produced."""

    arguments: str

    def parsed_arguments(self) -> Any:
        """The arguments as JSON data; raises ToolgenValidationError when the text is not JSON."""
        try:
            return parse_json(self.arguments)
        except ToolgenValidationError as error:
            raise ToolgenValidationError(
                [
                    ValidationProblem("/function/arguments" + p.pointer, p.message)
                    for p in error.problems
                ]
            ) from None


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
    # Sent in OpenAI strict mode, where every optional argument is nullable and null means absent (README,
    # "Validation": null and absent arguments); decided at build time from `strict` and `export: strict`.
    null_as_absent: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)
    annotations: Mapping[str, Any] = field(default_factory=dict)
    # The meta keys folded into the description every provider is sent: all of them (True) or those listed.
    describe_meta: bool | tuple[str, ...] = False
    # Decided at build time: the models do not enforce every keyword, so a JSON Schema check runs too.
    check_input: bool = False
    check_output: bool = False
    # The input schema as written, when the JSON Schema check must see it so ($id, anchors, $dynamicRef).
    check_schema: Mapping[str, Any] | None = None
    # Vendored documents the schema as written refers to (URI -> document): the check never fetches anything.
    check_resources: Mapping[str, Any] = field(default_factory=dict)
    # The draft each check reads its schema as (`input`/`output` -> `$schema`), when not 2020-12.
    dialects: Mapping[str, str] = field(default_factory=dict)
    # Said by every run that offers the tool, each as a `note` event: an MCP server's drift from its lock.
    notes: tuple[str, ...] = field(default=(), compare=False)
    _schema_validators: dict[str, Any] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def deferred(cls, models: DeferredModels, **fields: Any) -> ToolSpec:
        """A spec whose args_model and result_model are imported when first read, not when it is made.

        A generated package's TOOLS holds such specs: importing it creates no model class, and a tool's
        models cost their import only when that tool validates, dispatches or is asked for them.
        """
        spec = cls(args_model=pydantic.BaseModel, result_model=None, **fields)
        # Taken out again, so that reading them reaches __getattr__, which loads them.
        object.__delattr__(spec, "args_model")
        object.__delattr__(spec, "result_model")
        object.__setattr__(spec, "_deferred_models", models)
        return spec

    # Hidden from type checkers, which would read any attribute of a spec as Any.
    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            deferred = self.__dict__.get("_deferred_models")
            if deferred is None or name not in ("args_model", "result_model"):
                raise AttributeError(
                    f"{type(self).__name__!r} object has no attribute {name!r}"
                )
            args, result = deferred.load()
            object.__setattr__(self, "args_model", args)
            object.__setattr__(self, "result_model", result)
            return args if name == "args_model" else result

    def check_arguments(self, data: Any, *, json_text: bool = True) -> Any:
        """The arguments (JSON text or data) as the args model, or ToolgenValidationError listing every problem.

        With `json_text`, a str or bytes is JSON text to parse first; without it, data already parsed (a string
        is then the arguments themselves). A value the input schema accepts but the args model cannot hold (a
        non-object, where the schema has `properties` but no `type`) comes back as the JSON data itself:
        validity is the schema's to decide. Null for an optional argument whose schema does not allow it is a
        problem, unless the tool is sent in strict mode (`null_as_absent`), where it means the argument is absent.
        """
        # Data may come from a frozen model (a tuple, a FrozenDict): checked as the lists and dicts it stands for.
        if json_text and isinstance(data, (str, bytes, bytearray)):
            value = parsed_json(data)
        else:
            _within_depth(data)
            value = thawed(data)
        try:
            return self._checked_arguments(value)
        except ToolgenValidationError:
            if not self.null_as_absent:
                raise
            # Imported here: only a strict tool's call that failed validation needs it.
            from ..schema.fit import drop_strict_nulls

            lenient = drop_strict_nulls(value, self.input_schema)
            if lenient == value:
                raise
            return self._checked_arguments(lenient)

    def _checked_arguments(self, value: Any) -> Any:
        # The model first: its sentences are the clearer ones; the schema check then covers what it cannot see.
        try:
            args = check(self.args_model, value, json_text=False)
        except ToolgenValidationError:
            # A value the model cannot hold but the schema allows is returned as data; the model's problems
            # are the ones reported otherwise, so the check only says yes or no.
            if self.check_input and self._schema_accepts(
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
        if not isinstance(data, pydantic.BaseModel):
            _within_depth(data)
            # What a handler hands back from its frozen arguments (a tuple, a FrozenDict) is the JSON it stands for.
            data = thawed(data)
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
        validator = self._schema_validator(which, schema)
        if isinstance(validator, ValidationProblem):
            return [validator]
        return schema_problems(validator, value)

    def _schema_accepts(
        self, which: str, schema: Mapping[str, Any], value: Any
    ) -> bool:
        validator = self._schema_validator(which, schema)
        return not isinstance(validator, ValidationProblem) and schema_accepts(
            validator, value
        )

    def _schema_validator(self, which: str, schema: Mapping[str, Any]) -> Any:
        """The JSON Schema validator of the input or output schema, made once; or why there is none."""
        validator = self._schema_validators.get(which)
        if validator is None:
            try:
                validator = schema_validator(
                    schema, self.check_resources, self.dialects.get(which)
                )
            except Exception as error:  # noqa: BLE001 - a schema the check cannot take must not crash a dispatch
                return ValidationProblem(
                    "", f"could not be checked against its schema: {error}"
                )
            self._schema_validators[which] = validator
        return validator

    def definition(self) -> dict[str, Any]:
        """The tool in toolgen's canonical definition format (camelCase keys, absent values left out)."""
        # Imported here: the wires' table loads with it, and validating needs none of it.
        from ..wires.export import canonical_definition

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
            describeMeta=_described_meta(self.describe_meta),
        )


def _within_depth(data: Any) -> None:
    """Data nests no deeper than JSON text may (MAX_JSON_DEPTH), or ToolgenValidationError at the first place it
    does: the same answer as for the same value sent as text, and no validator goes past Python's recursion limit."""
    deep = nesting_problem(data)
    if deep is not None:
        raise ToolgenValidationError([deep])


def _described_meta(chosen: bool | tuple[str, ...]) -> bool | list[str] | None:
    """`describeMeta` as a definition spells it: true, the list of keys, or absent (None)."""
    if chosen is True:
        return True
    return list(chosen) if isinstance(chosen, tuple) and chosen else None
