"""Checks documents against toolgen's own meta-schemas and JSON Schemas against their draft's meta-schema."""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Iterator, Mapping
from types import MappingProxyType
from typing import Any

import jsonschema
import yaml
from jsonschema.exceptions import ValidationError

from toolgen.core.diagnostics import Diagnostic
from toolgen.core.positions import Pointer, pointer_text
from toolgen.core.resources import schemas_dir
from toolgen.runtime import schema_error_sentences
from toolgen.source.load import Document
from toolgen.source.meta_subset import proven_valid

_MAX_MESSAGE = 240


def _built_in(path: str) -> Any:
    """One of toolgen's own YAML schemas, read with libyaml's loader when PyYAML has it (several times faster)."""
    text = (schemas_dir() / path).read_text(encoding="utf-8")
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@functools.cache
def _meta_validator(name: str) -> jsonschema.protocols.Validator:
    """`config` is meta/config.schema.yaml; `tool` is the canonical ToolDefinition, the one source of that shape."""
    if name == "tool":
        defs = _built_in("canonical/tool_definition.yaml")
        schema = {"$defs": defs["$defs"], "$ref": "#/$defs/ToolDefinition"}
    else:
        schema = _built_in(f"meta/{name}.schema.yaml")
    validator_class = jsonschema.validators.validator_for(schema)
    return validator_class(schema)


def _short(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."


def _located(document: Document, prefix: Pointer, error: ValidationError, rule: str) -> Iterator[Diagnostic]:
    """jsonschema's error in the runtime's one sentence shape, `/pointer: expected ..., got ...`; a missing or an
    unexpected property at its own key."""
    pointer: Pointer = (*prefix, *(str(part) for part in error.absolute_path))
    for below, sentence in schema_error_sentences(error):
        at = (*pointer, *(str(part) for part in below))
        place = document.key_diagnostic if below else document.diagnostic
        yield place(at, rule, _short(f"{pointer_text(at) or '/'}: {sentence}"))


def check_against_meta_schema(
    document: Document, name: str, data: Any = None, prefix: Pointer = ()
) -> Iterator[Diagnostic]:
    """Shape errors in `data` (default: the whole document) against meta/<name>.schema.yaml."""
    instance = document.data if data is None else data
    for error in sorted(_meta_validator(name).iter_errors(instance), key=lambda e: list(map(str, e.absolute_path))):
        yield from _located(document, prefix, error, "shape")


_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/"


def _rewrite_refs(node: Any, vocabulary: str, top: bool = True) -> Any:
    """Point a vocabulary's refs into the flat document; `$dynamicRef: #meta` always lands on the root here.

    Only a document's own identity (`$id`, `$schema`, ...) at its `top` is dropped: below it, under the core
    vocabulary's `properties`, the same names are the definitions of those keywords and must stay.
    """
    if isinstance(node, list):
        return [_rewrite_refs(item, vocabulary, top=False) for item in node]
    if not isinstance(node, dict):
        return node
    result: dict[str, Any] = {}
    for key, value in node.items():
        if top and key in ("$id", "$schema", "$vocabulary", "$dynamicAnchor"):
            continue
        if key == "$dynamicRef" and value == "#meta":
            result["$ref"] = "#"
        elif key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
            result["$ref"] = f"#/$defs/{vocabulary}/$defs/{value[len('#/$defs/') :]}"
        elif key == "$ref" and isinstance(value, str) and value.startswith("meta/"):
            name, _, fragment = value[len("meta/") :].partition("#")
            result["$ref"] = f"#/$defs/{name}{fragment}"
        else:
            result[key] = _rewrite_refs(value, vocabulary, top=False)
    return result


@functools.cache
def flat_2020_12_validator() -> jsonschema.protocols.Validator:
    """The 2020-12 meta-schema as one document without dynamic references, which validates about 4x faster.

    Validating a schema against the 2020-12 meta-schema, every `$dynamicRef: #meta` resolves to the
    meta-schema's root (the outermost resource with that dynamic anchor), so static refs to the root say
    exactly the same; a test checks both give the same verdicts.
    """
    from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]

    root = jsonschema.Draft202012Validator.META_SCHEMA
    flat = _rewrite_refs(root, "")
    flat["$defs"] = {}
    for entry in root["allOf"]:
        name = entry["$ref"][len("meta/") :]
        flat["$defs"][name] = _rewrite_refs(REGISTRY.contents(_DRAFT_2020_12 + entry["$ref"]), name)
    flat["$schema"] = _DRAFT_2020_12 + "schema"
    return jsonschema.Draft202012Validator(flat)


def _meta_schema_validator(schema: Mapping[str, Any]) -> jsonschema.protocols.Validator:
    validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    if validator_class is jsonschema.Draft202012Validator:
        return flat_2020_12_validator()
    return validator_class(validator_class.META_SCHEMA)


def tool_shape_errors(tool: Mapping[str, Any]) -> Iterator[tuple[tuple[str, ...], str]]:
    """(path inside the tool, message) for each way `tool` breaks the canonical ToolDefinition schema."""
    for error in _meta_validator("tool").iter_errors(tool):
        for below, sentence in schema_error_sentences(error):
            yield tuple(str(p) for p in (*error.absolute_path, *below)), _short(sentence)


# The canonical message kinds by role, as schemas/canonical/message.yaml defines them.
_MESSAGE_KINDS = MappingProxyType(
    {"system": "SystemMessage", "user": "UserMessage", "assistant": "AssistantMessage", "tool": "ToolMessage"}
)


@functools.cache
def _message_validator(kind: str) -> jsonschema.protocols.Validator:
    """The canonical schema of one message kind, with the other canonical files it refers to by name."""
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    names = ("content.yaml", "message.yaml", "tool_call.yaml")
    registry: Registry[Any] = Registry().with_resources(
        (name, Resource.from_contents(_built_in(f"canonical/{name}"), default_specification=DRAFT202012))
        for name in names
    )
    return jsonschema.Draft202012Validator({"$ref": f"message.yaml#/$defs/{kind}"}, registry=registry)


def message_shape_errors(message: Any) -> Iterator[tuple[tuple[str, ...], str]]:
    """(path inside the message, sentence) for each way `message` breaks the canonical Message schema; the role
    first, since it decides which of the four kinds the rest is checked as."""
    if not isinstance(message, Mapping):
        yield (), f"expected a message object, got {type(message).__name__}"
        return
    role = message.get("role")
    if not isinstance(role, str) or role not in _MESSAGE_KINDS:
        got = _short(json.dumps(role)) if "role" in message else "nothing"
        yield ("role",), f"expected one of {', '.join(map(repr, _MESSAGE_KINDS))} (it is required), got {got}"
        return
    validator = _message_validator(_MESSAGE_KINDS[role])
    for error in sorted(validator.iter_errors(message), key=lambda e: list(map(str, e.absolute_path))):
        for below, sentence in schema_error_sentences(error):
            yield tuple(str(p) for p in (*error.absolute_path, *below)), _short(sentence)


def check_json_schema(
    document: Document, schema: Any, prefix: Pointer, reported: Collection[Pointer] = ()
) -> Iterator[Diagnostic]:
    """A schema must itself be valid under the meta-schema of the draft it declares (2020-12 when silent).

    `reported` are places in `schema` (relative to it) that the caller has already reported more clearly, such as
    a non-standard `type`: errors at or below them are left out, and when no other error can be, jsonschema is not
    run.
    """
    if isinstance(schema, bool):
        return
    if not isinstance(schema, Mapping):
        yield document.diagnostic(prefix, "schema-invalid", "a JSON Schema must be an object or a boolean")
        return
    validator = _meta_schema_validator(schema)
    if validator is flat_2020_12_validator() and proven_valid(schema, frozenset(reported)):
        return  # the common case, shown valid keyword by keyword; jsonschema words the errors of the rest
    covered = [pointer_text((*prefix, *place)) for place in reported]
    for error in validator.iter_errors(schema):
        for diagnostic in _located(document, prefix, error, "schema-invalid"):
            if not any(diagnostic.pointer == above or diagnostic.pointer.startswith(above + "/") for above in covered):
                yield diagnostic
