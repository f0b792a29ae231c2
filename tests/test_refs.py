"""$ref resolution: embedded $id resources, $anchors, vendored remote documents, and what is refused."""

from __future__ import annotations

import json

import pytest

import toolgen
from toolgen.errors import InvalidInputError

from conftest import Project

SCHEMA = {
    "$id": "https://example.com/schemas/order",
    "type": "object",
    "properties": {
        "item": {"$ref": "item"},
        "size": {"$ref": "#size"},
        "price": {"$ref": "https://example.com/shared/money.json#/$defs/amount"},
    },
    "required": ["item"],
    "$defs": {
        "item": {"$id": "item", "type": "string", "minLength": 1},
        "size": {"$anchor": "size", "enum": ["s", "m", "l"]},
    },
}


def _project(make_project: object, remotes: str = "") -> Project:
    project: Project = make_project()  # type: ignore[operator]
    config = (project.root / "toolgen.yaml").read_text() + remotes
    (project.root / "toolgen.yaml").write_text(config)
    project.write("schemas/order.json", json.dumps({"tools": [{"name": "order", "inputSchema": SCHEMA}]}))
    project.write("vendor/shared/money.json", json.dumps({"$defs": {"amount": {"type": "number", "minimum": 0}}}))
    return project


def test_ids_anchors_and_vendored_remotes_resolve(make_project: object) -> None:
    project = _project(make_project, "remotes: {'https://example.com/shared/': vendor/shared/}\n")
    toolgen.build(project.root)
    schema = json.dumps(toolgen.api.export("openai", project.root)[0].tools[0]["function"]["parameters"])
    assert '"minLength": 1' in schema and '"enum": ["s", "m", "l"]' in schema and '"minimum": 0' in schema


def test_an_unvendored_remote_ref_and_a_dynamic_ref_are_refused_at_their_place(make_project: object) -> None:
    project = _project(make_project)
    with pytest.raises(InvalidInputError) as caught:
        toolgen.build(project.root)
    assert [(d.rule, d.pointer) for d in caught.value.diagnostics] == [
        ("ref-remote", "/tools/0/inputSchema/properties/price/$ref")
    ]
    escaping = _project(make_project, "remotes: {'https://example.com/shared/': vendor/shared/}\n")
    escaping.write(
        "schemas/order.json",
        json.dumps(
            {
                "tools": [
                    {
                        "name": "o",
                        "inputSchema": {
                            "type": "object",
                            "properties": {"a": {"$ref": "https://example.com/shared/../../toolgen.yaml"}},
                            "$defs": {"d": {"$dynamicRef": "#x"}},
                        },
                    }
                ]
            }
        ),
    )
    with pytest.raises(InvalidInputError) as caught:
        toolgen.build(escaping.root)
    assert {d.rule for d in caught.value.diagnostics} == {"ref-remote", "ref-unsupported"}
