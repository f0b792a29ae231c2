# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The structured-output setting (`response_format`) in each wire's spelling, to and from its canonical form.

Canonical: `{"type": "json_schema", "schema": {...}, "name"?: str, "description"?: str, "strict"?: bool}`,
`{"type": "json_object"}` (any JSON) or `{"type": "text"}`. A wire that keeps less of it (Anthropic and Bedrock
take the schema, Gemini, Interactions and Ollama the schema alone) reads back less, and the conversion notes say what was left
out; a wire with no JSON-object mode writes nothing for it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

_KINDS = ("json_schema", "json_object", "text")


def _schema_format(
    schema: Any, name: Any = None, description: Any = None, strict: Any = None
) -> dict[str, Any] | None:
    if not isinstance(schema, dict):
        return None
    out: dict[str, Any] = {"type": "json_schema"}
    if isinstance(name, str):
        out["name"] = name
    if isinstance(description, str):
        out["description"] = description
    out["schema"] = schema
    if isinstance(strict, bool):
        out["strict"] = strict
    return out


def from_chat(value: Any) -> dict[str, Any] | None:
    """OpenAI Chat's (and Mistral's, Groq's ...) `response_format`."""
    if not isinstance(value, dict) or value.get("type") not in _KINDS:
        return None
    if value["type"] != "json_schema":
        return {"type": value["type"]}
    spec = value.get("json_schema")
    if not isinstance(spec, dict):
        return None
    return _schema_format(
        spec.get("schema"),
        spec.get("name"),
        spec.get("description"),
        spec.get("strict"),
    )


def to_chat(fmt: Mapping[str, Any]) -> dict[str, Any]:
    if fmt["type"] != "json_schema":
        return {"type": fmt["type"]}
    spec: dict[str, Any] = {"name": fmt.get("name", "response")}
    for key in ("description", "schema", "strict"):
        if key in fmt:
            spec[key] = fmt[key]
    return {"type": "json_schema", "json_schema": spec}


def from_responses(text: Any) -> dict[str, Any] | None:
    """The Responses API's `text.format`."""
    value = text.get("format") if isinstance(text, dict) else None
    if not isinstance(value, dict) or value.get("type") not in _KINDS:
        return None
    if value["type"] != "json_schema":
        return {"type": value["type"]}
    return _schema_format(
        value.get("schema"),
        value.get("name"),
        value.get("description"),
        value.get("strict"),
    )


def to_responses(fmt: Mapping[str, Any]) -> dict[str, Any]:
    if fmt["type"] != "json_schema":
        return {"type": fmt["type"]}
    out: dict[str, Any] = {"type": "json_schema", "name": fmt.get("name", "response")}
    for key in ("description", "schema", "strict"):
        if key in fmt:
            out[key] = fmt[key]
    return out


def from_anthropic(config: Any) -> dict[str, Any] | None:
    """Anthropic's `output_config.format`: a JSON schema only."""
    value = config.get("format") if isinstance(config, dict) else None
    if isinstance(value, dict) and value.get("type") == "json_schema":
        return _schema_format(value.get("schema"))
    return None


def to_anthropic(fmt: Mapping[str, Any]) -> dict[str, Any] | None:
    if fmt["type"] != "json_schema":
        return None
    return {"type": "json_schema", "schema": fmt["schema"]}


def from_gemini(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """Gemini's `generationConfig.responseMimeType` with `responseJsonSchema` (or `responseSchema`)."""
    mime = config.get("responseMimeType", config.get("response_mime_type"))
    if mime != "application/json":
        return None
    for key in (
        "responseJsonSchema",
        "response_json_schema",
        "responseSchema",
        "response_schema",
    ):
        if isinstance(config.get(key), dict):
            return _schema_format(config[key])
    return {"type": "json_object"}


def to_gemini(fmt: Mapping[str, Any]) -> dict[str, Any]:
    if fmt["type"] == "text":
        return {"responseMimeType": "text/plain"}
    out: dict[str, Any] = {"responseMimeType": "application/json"}
    if fmt["type"] == "json_schema":
        out["responseJsonSchema"] = fmt["schema"]
    return out


def from_interactions(fields: Mapping[str, Any]) -> dict[str, Any] | None:
    """The Interactions API's top-level `response_mime_type` with `response_format` (a JSON schema)."""
    if fields.get("response_mime_type") != "application/json":
        return None
    schema = fields.get("response_format")
    return (
        _schema_format(schema) if isinstance(schema, dict) else {"type": "json_object"}
    )


def to_interactions(fmt: Mapping[str, Any]) -> dict[str, Any]:
    if fmt["type"] == "text":
        return {"response_mime_type": "text/plain"}
    out: dict[str, Any] = {"response_mime_type": "application/json"}
    if fmt["type"] == "json_schema":
        out["response_format"] = fmt["schema"]
    return out


def from_bedrock(config: Any) -> dict[str, Any] | None:
    """Converse's `outputConfig.textFormat`: a JSON schema sent as JSON text."""
    text = config.get("textFormat") if isinstance(config, dict) else None
    structure = text.get("structure") if isinstance(text, dict) else None
    spec = structure.get("jsonSchema") if isinstance(structure, dict) else None
    if not isinstance(spec, dict) or not isinstance(spec.get("schema"), str):
        return None
    try:
        schema = json.loads(spec["schema"])
    except json.JSONDecodeError:
        return None
    return _schema_format(schema, spec.get("name"), spec.get("description"))


def to_bedrock(fmt: Mapping[str, Any]) -> dict[str, Any] | None:
    if fmt["type"] != "json_schema":
        return None
    spec: dict[str, Any] = {"schema": json.dumps(fmt["schema"], ensure_ascii=False)}
    for key in ("name", "description"):
        if key in fmt:
            spec[key] = fmt[key]
    return {"textFormat": {"type": "json_schema", "structure": {"jsonSchema": spec}}}


def from_cohere(value: Any) -> dict[str, Any] | None:
    """Cohere's `response_format`: `json_object`, with an optional `json_schema`."""
    if not isinstance(value, dict) or value.get("type") not in ("json_object", "text"):
        return None
    if isinstance(value.get("json_schema"), dict):
        return _schema_format(value["json_schema"])
    return {"type": value["type"]}


def to_cohere(fmt: Mapping[str, Any]) -> dict[str, Any]:
    if fmt["type"] == "json_schema":
        return {"type": "json_object", "json_schema": fmt["schema"]}
    return {"type": fmt["type"]}


def from_ollama(value: Any) -> dict[str, Any] | None:
    """Ollama's `format`: "json", or a JSON schema."""
    if value == "json":
        return {"type": "json_object"}
    return _schema_format(value)


def to_ollama(fmt: Mapping[str, Any]) -> Any:
    if fmt["type"] == "text":
        return None
    return fmt["schema"] if fmt["type"] == "json_schema" else "json"
