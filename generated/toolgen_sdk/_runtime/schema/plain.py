# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""A model's pydantic-core schema as plain JSON data, so a later process can validate without building the model.

pydantic builds a model's validator from its core schema, a tree of dicts. Most of that tree is data already;
what is not is the model itself (its class, which the validator instantiates) and any Python callable. A model
becomes a typed dict with the same fields, aliases, config and extra-key rule, so the plain validator accepts
exactly the data the model accepts; it only builds no instance. A schema with anything else that is not data
(a function validator, a custom `__init__`, a class check, a default factory that must be validated) has no
plain form: `plain_schema` returns None, and that target is checked with the models as before.

`toolgen validate` keeps these schemas between runs; the package's adapters check dict messages with one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pydantic_core

# Schema types made only of data, whose validation does not depend on a Python object of the model's.
_DATA_TYPES = frozenset(
    {
        "any",
        "none",
        "bool",
        "int",
        "float",
        "decimal",
        "str",
        "bytes",
        "literal",
        "list",
        "tuple",
        "set",
        "frozenset",
        "dict",
        "nullable",
        "union",
        "tagged-union",
        "default",
        "definitions",
        "definition-ref",
        "typed-dict",
        "typed-dict-field",
        "json-or-python",
        "lax-or-strict",
        "custom-error",
        "chain",
        "date",
        "time",
        "datetime",
        "timedelta",
        "uuid",
        "url",
        "multi-host-url",
        "complex",
    }
)
# Keys that shape only serialization or JSON Schema output, which validation never reads.
_DROPPED = frozenset(
    {"metadata", "serialization", "computed_fields", "model_name", "cls_name"}
)
# Keys of a model's fields schema that a typed dict reads the same way.
_FIELDS_KEYS = frozenset(
    {"fields", "strict", "extras_schema", "extra_behavior", "type"}
)


class _NotData(Exception):
    """The schema holds something a plain validator cannot reproduce."""


def plain_schema(core_schema: Mapping[str, Any]) -> str | None:
    """The schema as JSON text a `pydantic_core.SchemaValidator` builds from, or None when it has no plain form."""
    try:
        plain = _plain(core_schema)
        text = json.dumps(plain, allow_nan=False, sort_keys=True, separators=(",", ":"))
    except (_NotData, TypeError, ValueError, RecursionError):
        return None
    # What JSON cannot keep (tuple keys, non-string dict keys, sets) was refused above or changed shape here:
    # the text must read back to the very tree it was made from.
    return text if json.loads(text) == plain else None


def plain_validator(
    core_schema: Mapping[str, Any],
) -> pydantic_core.SchemaValidator | None:
    """A validator of the schema's plain form, which builds no models; None when it has none, or when this
    pydantic-core cannot build it (the models then check everything)."""
    text = plain_schema(core_schema)
    if text is None:
        return None
    try:
        return pydantic_core.SchemaValidator(json.loads(text))
    except pydantic_core.SchemaError:
        return None


def _plain(node: Any) -> Any:
    if isinstance(node, Mapping):
        kind = node.get("type")
        if isinstance(kind, str):
            return _schema(kind, node)
        return {_key(key): _plain(value) for key, value in node.items()}
    if isinstance(node, (list, tuple)):
        return [_plain(item) for item in node]
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    raise _NotData(type(node).__name__)


def _key(key: Any) -> str:
    if not isinstance(key, str):
        raise _NotData(f"a key of type {type(key).__name__}")
    return key


def _schema(kind: str, node: Mapping[str, Any]) -> Any:
    if kind == "model":
        return _model(node)
    if kind == "function-wrap":
        return _null_refusing(node)
    if kind == "function-after" and _freezing(node):
        return _with_ref(_plain(node.get("schema")), node)
    if kind == "model-fields":
        return _fields(node, None)
    if kind == "default" and ("default_factory" in node or "on_error" in node):
        if node.get("validate_default") or node.get("on_error") not in (None, "raise"):
            raise _NotData("a default made or replaced by a function")
        # Never validated: the value only fills in the missing key, which the plain validator does not keep.
        node = {
            key: value for key, value in node.items() if key != "default_factory"
        } | {"default": None}
    elif kind == "default" and not node.get("validate_default"):
        # Never validated either; a list default is frozen, a tuple JSON cannot hold (models/frozen.py).
        node = dict(node) | {"default": None}
    elif kind == "tagged-union" and not _plain_discriminator(node.get("discriminator")):
        raise _NotData("a discriminator function")
    elif kind not in _DATA_TYPES:
        raise _NotData(kind)
    return {
        key: _plain_field(key, value)
        for key, value in node.items()
        if key not in _DROPPED
    }


def _plain_field(key: str, value: Any) -> Any:
    if key == "choices" and isinstance(value, Mapping):
        return {
            _key(tag): _plain(choice) for tag, choice in value.items()
        }  # a tagged union's tags: strings only
    if key == "default":
        return _json_value(value)
    return _plain(value)


def _json_value(value: Any) -> Any:
    """A literal's or default's value, which must be JSON data as it is (a tuple would come back as a list)."""
    if isinstance(value, Mapping):
        return {_key(key): _json_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_value(item) for item in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise _NotData(type(value).__name__)


def _plain_discriminator(discriminator: Any) -> bool:
    if isinstance(discriminator, str):
        return True
    return isinstance(discriminator, list) and all(
        isinstance(step, (str, int))
        or (isinstance(step, list) and all(isinstance(s, (str, int)) for s in step))
        for step in discriminator
    )


def _null_refusing(node: Mapping[str, Any]) -> Any:
    """A NullRefusingModel, whose null refusal wraps the whole model: the model with that refusal as data."""
    model = _null_refusing_model(node.get("function"))
    inner = node.get("schema")
    if model is None or not isinstance(inner, Mapping) or inner.get("type") != "model":
        raise _NotData("a function validator")
    refused = frozenset(
        name
        for name, field in model.model_fields.items()
        if (field.alias or name) in model.toolgen_not_null
    )
    return _with_ref(_model(inner, refused), node)


def _model(node: Mapping[str, Any], refused: frozenset[str] = frozenset()) -> Any:
    if node.get("custom_init") or node.get("post_init") or node.get("generic_origin"):
        raise _NotData("a model with its own __init__ or post-init")
    inner = node.get("schema")
    config = node.get("config")
    if not isinstance(inner, Mapping):
        raise _NotData("a model without a schema")
    if node.get("root_model"):
        if refused:
            raise _NotData("a root model that refuses null")
        plain = _plain(inner)
        if (
            isinstance(config, Mapping)
            and config.get("strict") is not None
            and isinstance(plain, dict)
        ):
            plain.setdefault("strict", config["strict"])
        return _with_ref(plain, node)
    if inner.get("type") != "model-fields":
        raise _NotData("a model whose schema is not its fields")
    return _with_ref(_fields(inner, config, refused), node)


def _with_ref(plain: Any, node: Mapping[str, Any]) -> Any:
    ref = node.get("ref")
    if isinstance(ref, str) and isinstance(plain, dict):
        if "ref" in plain and plain["ref"] != ref:
            raise _NotData(
                "a model whose schema has a reference of its own"
            )  # two names for one node
        plain["ref"] = ref
    return plain


def _fields(
    node: Mapping[str, Any], config: Any, refused: frozenset[str] = frozenset()
) -> dict[str, Any]:
    unknown = set(node) - _FIELDS_KEYS - _DROPPED - {"ref", "from_attributes"}
    if unknown:
        raise _NotData(f"model fields with {sorted(unknown)}")
    fields = node.get("fields")
    if not isinstance(fields, Mapping):
        raise _NotData("model fields without fields")
    plain: dict[str, Any] = {
        "type": "typed-dict",
        "fields": {
            _key(name): _field(field, name in refused) for name, field in fields.items()
        },
    }
    for key in ("strict", "extras_schema", "extra_behavior", "ref"):
        if key in node:
            plain[key] = _plain(node[key])
    if config is not None:
        plain["config"] = _json_value(dict(config))
    return plain


def _field(node: Any, refused: bool) -> dict[str, Any]:
    if not isinstance(node, Mapping) or node.get("type") != "model-field":
        raise _NotData("a model field that is not a model-field")
    unknown = set(node) - {
        "type",
        "schema",
        "validation_alias",
        "serialization_alias",
        "frozen",
        "metadata",
        "serialization_exclude",
        "serialization_exclude_if",
    }
    if unknown:
        raise _NotData(f"a model field with {sorted(unknown)}")
    inner = node.get("schema")
    if not isinstance(inner, Mapping):
        raise _NotData("a model field without a schema")
    # A model field is optional exactly when its schema gives a default; a typed dict must be told.
    plain: dict[str, Any] = {
        "type": "typed-dict-field",
        "schema": _field_schema(inner, refused),
        "required": inner.get("type") != "default",
    }
    if "validation_alias" in node:
        plain["validation_alias"] = _json_value(node["validation_alias"])
    return plain


def _field_schema(node: Mapping[str, Any], refused: bool) -> Any:
    """A field's schema, with the runtime's null refusal (NullRefusingModel) written as data."""
    if not refused:
        return _plain(node)
    if node.get("type") == "default" and isinstance(node.get("schema"), Mapping):
        outer = _schema(
            "default",
            {key: value for key, value in node.items() if key != "schema"}
            | {"schema": {"type": "any"}},
        )
        return outer | {"schema": _field_schema(node["schema"], refused)}
    return _plain(_non_null(node))


def _freezing(node: Mapping[str, Any]) -> bool:
    """A conversion of the models' frozen types (models/frozen.py): a valid value's form changes, not its validity."""
    function = node.get("function")
    call = function.get("function") if isinstance(function, Mapping) else None
    return call is tuple or (
        getattr(call, "__qualname__", None) in ("frozen", "frozen_dict")
        and str(getattr(call, "__module__", "")).endswith(".models.frozen")
    )


def _null_refusing_model(function: Any) -> Any:
    """The model class whose `_refuse_null` validator this is, or None for any other function."""
    call = function.get("function") if isinstance(function, Mapping) else None
    owner = getattr(call, "__self__", None)
    method = getattr(call, "__func__", None)
    if (
        getattr(method, "__qualname__", None) != "NullRefusingModel._refuse_null"
        or not isinstance(getattr(owner, "toolgen_not_null", None), frozenset)
        or not hasattr(owner, "model_fields")
    ):
        return None
    return owner


# Schema types whose values are never null in strict mode (anything else may accept it, or hide what does).
_NEVER_NULL = frozenset(
    {
        "bool",
        "int",
        "float",
        "decimal",
        "str",
        "bytes",
        "list",
        "tuple",
        "set",
        "frozenset",
        "dict",
        "typed-dict",
        "model",
    }
)


def _non_null(node: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema without null, as NullRefusingModel refuses it for a field the schema gives no null."""
    kind = node.get("type")
    if kind == "nullable" and isinstance(node.get("schema"), Mapping):
        inner: Mapping[str, Any] = node["schema"]
        return inner
    if kind in _NEVER_NULL:
        return node
    if (
        kind == "function-after"
        and _freezing(node)
        and isinstance(node.get("schema"), Mapping)
    ):
        return {**node, "schema": _non_null(node["schema"])}
    raise _NotData(f"a refused null beside a {kind} schema")
