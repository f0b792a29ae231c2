"""$ref resolution: embedded $id resources, $anchors, vendored remote documents, meta-schemas, $dynamicRef, refusals."""

from __future__ import annotations

import json
import os
import shutil
import socket
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from support.projects import Project, run_sdk

import toolgen
from toolgen.core.errors import InvalidInputError

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
    schema = json.dumps(toolgen.export(project.root, provider="openai")[0].tools[0]["function"]["parameters"])
    assert '"minLength": 1' in schema and '"enum": ["s", "m", "l"]' in schema and '"minimum": 0' in schema


def test_an_unvendored_remote_ref_and_a_dynamic_ref_are_refused_at_their_place(make_project: object) -> None:
    project = _project(make_project)
    with pytest.raises(InvalidInputError) as caught:
        toolgen.build(project.root)
    assert [(d.rule, d.pointer) for d in caught.value.diagnostics] == [
        ("ref-remote", "/tools/0/inputSchema/properties/price/$ref")
    ]
    assert "remotes:" in caught.value.diagnostics[0].message  # says what to do
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
                            "properties": {
                                "a": {"$ref": "https://example.com/shared/../../toolgen.yaml"},
                                "b": {"$ref": "#/$defs/d"},
                            },
                            "$defs": {"d": {"$dynamicRef": "#x"}},
                        },
                    }
                ]
            }
        ),
    )
    with pytest.raises(InvalidInputError) as caught:
        toolgen.build(escaping.root)
    assert {(d.rule, d.pointer) for d in caught.value.diagnostics} == {
        ("ref-remote", "/tools/0/inputSchema/properties/a/$ref"),
        ("ref-unsupported", "/tools/0/inputSchema/$defs/d/$dynamicRef"),
    }


# A vendored remote document: an extensible tree (its children follow the dynamic scope) and an anchored count.
TREE = {
    "$id": "https://example.com/shared/tree.json",
    "$dynamicAnchor": "node",
    "type": "object",
    "properties": {"kids": {"type": "array", "items": {"$dynamicRef": "#node"}}},
    "$defs": {"count": {"$anchor": "count", "type": "integer", "minimum": 0}},
}
META = "https://json-schema.org/draft/2020-12/schema"
URN = "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed"
# From the official suite: `$defs/bar` alone is not self-contained, the schema as written is.
DYNAMIC = {
    "$id": "https://test.example/relative-dynamic-reference/root",
    "$dynamicAnchor": "meta",
    "type": "object",
    "properties": {"foo": {"const": "pass"}},
    "$ref": "extended",
    "$defs": {
        "extended": {
            "$id": "extended",
            "$dynamicAnchor": "meta",
            "type": "object",
            "properties": {"bar": {"$ref": "bar"}},
        },
        "bar": {"$id": "bar", "type": "object", "properties": {"baz": {"$dynamicRef": "extended#meta"}}},
    },
}
WRITTEN_TOOLS = [
    {"name": "meta", "inputSchema": {"type": "object", "properties": {"schema": {"$ref": META}}}},
    {"name": "urn", "inputSchema": {"$id": URN, "minimum": 30, "properties": {"foo": {"$ref": URN}}}},
    {"name": "anchor", "inputSchema": {"type": "object", "properties": {"n": {"$ref": f"{TREE['$id']}#count"}}}},
    {"name": "dynamic", "inputSchema": DYNAMIC},
    {
        "name": "strict_tree",
        "inputSchema": {
            "$id": "https://example.com/shared/strict-tree.json",
            "$dynamicAnchor": "node",
            "$ref": "tree.json",
            "unevaluatedProperties": False,
        },
    },
]
# (tool, arguments, valid) as the JSON Schema specification has it.
CASES = [
    ("meta", {"schema": {"type": "string", "minLength": 1}}, True),
    ("meta", {"schema": {"type": 5}}, False),
    ("urn", {"foo": 37}, True),
    ("urn", {"foo": 12}, False),
    ("anchor", {"n": 3}, True),
    ("anchor", {"n": -1}, False),
    ("dynamic", {"foo": "pass", "bar": {"baz": {"foo": "pass"}}}, True),
    ("dynamic", {"foo": "pass", "bar": {"baz": {"foo": "fail"}}}, False),
    ("strict_tree", {"kids": [{"kids": []}]}, True),
    ("strict_tree", {"kids": [{"kidz": []}]}, False),
]
# Run in the generated package with the network cut off: any attempt is recorded (a raise would be swallowed).
OFFLINE = """\
import dataclasses, json, socket, sys, urllib.request
attempts = []
def refuse(*args, **kwargs):
    attempts.append(repr(args[:2]))
    raise OSError("no network in this test")
socket.socket.connect = refuse
socket.create_connection = refuse
urllib.request.urlopen = refuse
import sdk
cases = json.loads(sys.argv[1])
def accepts(spec, data):
    try:
        spec.check_arguments(data)
    except sdk.ToolgenValidationError as error:
        return [str(p) for p in error.problems]
    return True
results = [accepts(sdk.TOOLS[name], data) for name, data, _ in cases]
tree = sdk.TOOLS["strict_tree"]
# Without its vendored documents the check cannot resolve `tree.json`: a problem, never a fetch.
bare = dataclasses.replace(tree, check_resources={}, _schema_validators={})
spec = {name: [s.check_input, s.check_schema is not None, sorted(s.check_resources)] for name, s in sdk.TOOLS.items()}
print(json.dumps({"results": results, "bare": accepts(bare, {"kids": []}), "attempts": attempts, "spec": spec,
                  "meta_export": sdk.TOOLS["meta"].input_schema["properties"]["schema"]}))
"""


def _written_project(make_project: object, tools: list[Any], extra: str = "") -> Project:
    project: Project = make_project()  # type: ignore[operator]
    remotes = "remotes: {'https://example.com/shared/': vendor/shared/}\n"
    (project.root / "toolgen.yaml").write_text((project.root / "toolgen.yaml").read_text() + remotes + extra)
    project.write("schemas/tools.json", json.dumps({"tools": tools}))
    project.write("vendor/shared/tree.json", json.dumps(TREE))
    return project


def test_schemas_checked_as_written_meta_schemas_urns_remote_anchors_and_dynamic_refs(make_project: object) -> None:
    project = _written_project(make_project, WRITTEN_TOOLS)
    toolgen.build(project.root)
    out = run_sdk(project.root, OFFLINE, json.dumps(CASES))
    assert [result is True for result in out["results"]] == [valid for _, _, valid in CASES], out["results"]
    assert out["attempts"] == []
    assert out["bare"] != True and "could not be checked" in out["bare"][0]  # noqa: E712 - True or problems
    # The meta-schema stays a reference in the exported schema; the models take any value there.
    assert out["meta_export"] == {"$ref": META}
    assert out["spec"]["meta"] == [True, True, []]
    assert out["spec"]["dynamic"] == [True, True, []]
    assert out["spec"]["strict_tree"] == [True, True, [TREE["$id"]]]
    assert out["spec"]["urn"] == [True, True, []]  # an untyped `minimum` needs the check; `$id` makes it as written
    # A bundle that is exact needs no JSON Schema check: the remote anchor resolves statically.
    assert out["spec"]["anchor"] == [False, False, []]


def test_schema_validator_never_fetches(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolgen.runtime.models.check import schema_problems, schema_validator

    attempts: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise OSError("no network in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    validator = schema_validator({"properties": {"a": {"$ref": "https://example.com/elsewhere.json"}}})
    problems = schema_problems(validator, {"a": 1})
    assert attempts == []
    assert [p.pointer for p in problems] == [""] and "could not be checked" in problems[0].message
    # Meta-schemas are known without fetching; vendored documents come as resources.
    resources = {"https://example.com/n.json": {"type": "integer"}}
    schema = {"properties": {"s": {"$ref": META}, "n": {"$ref": "https://example.com/n.json"}}}
    assert schema_problems(schema_validator(schema, resources), {"s": {"type": "string"}, "n": 1}) == []
    assert len(schema_problems(schema_validator(schema, resources), {"s": {"type": 1}, "n": "x"})) == 2
    assert attempts == []


def test_what_only_a_check_as_written_can_follow_is_refused_elsewhere(make_project: object) -> None:
    dynamic_output = {
        "name": "out",
        "inputSchema": {"type": "object"},
        "outputSchema": {
            "$id": "https://example.com/out",
            "properties": {"a": {"$dynamicRef": "#n"}},
            "$defs": {"n": {"$dynamicAnchor": "n", "type": "string"}},
        },
    }
    extension = "extend: {message: message.json}\n"
    project = _written_project(make_project, [dynamic_output], extension)
    project.write("message.json", json.dumps({"properties": {"shape": {"$ref": META}}}))
    with pytest.raises(InvalidInputError) as caught:
        toolgen.build(project.root)
    found = sorted((d.path, d.rule, d.pointer) for d in caught.value.diagnostics)
    assert found == [
        ("message.json", "ref-unsupported", "/properties/shape/$ref"),
        ("schemas/tools.json", "ref-unsupported", "/tools/0/outputSchema/properties/a/$dynamicRef"),
    ]
    assert all("$ref" in d.message or "bundled" in d.message for d in caught.value.diagnostics)


def test_a_missing_remote_anchor_or_meta_schema_place_is_reported(make_project: object) -> None:
    tools = [
        {
            "name": "t",
            "inputSchema": {
                "properties": {
                    "a": {"$ref": f"{TREE['$id']}#nothing"},
                    "b": {"$ref": f"{META}#/$defs/nothing"},
                }
            },
        }
    ]
    project = _written_project(make_project, tools)
    with pytest.raises(InvalidInputError) as caught:
        toolgen.build(project.root)
    assert sorted((d.rule, d.pointer) for d in caught.value.diagnostics) == [
        ("ref-unresolved", "/tools/0/inputSchema/properties/a/$ref"),
        ("ref-unresolved", "/tools/0/inputSchema/properties/b/$ref"),
    ]


def test_vendored_documents_checked_as_written_are_normalized_like_the_bundle(make_project: object) -> None:
    project: Project = make_project()  # type: ignore[operator]
    config = project.root / "toolgen.yaml"
    config.write_text(
        config.read_text() + "normalize: [types]\nremotes: {'https://example.com/shared/': vendor/shared/}\n"
    )
    tool = {
        "name": "count",
        "inputSchema": {
            "$id": "https://example.com/tools/count",
            "type": "object",
            "minProperties": 1,
            "properties": {"n": {"$ref": "https://example.com/shared/count.json"}},
        },
    }
    project.write("schemas/tools.json", json.dumps({"tools": [tool]}))
    project.write("vendor/shared/count.json", json.dumps({"type": "int", "minimum": 0}))
    toolgen.build(project.root)
    code = """
    import json, sdk
    spec = sdk.TOOLS["count"]
    def outcome(data):
        try:
            sdk.validate_tool_arguments("count", data)
            return True
        except sdk.ToolgenValidationError as error:
            return [[p.pointer, p.message] for p in error.problems]
    print(json.dumps({"resources": spec.check_resources, "ok": outcome({"n": 3}), "bad": outcome({"n": -1})}))
    """
    out = run_sdk(project.root, code)
    assert out["resources"]["https://example.com/shared/count.json"]["type"] == "integer"
    assert out["ok"] is True
    assert [pointer for pointer, _ in out["bad"]] == ["/n"]


def test_reference_targets_where_no_keyword_leads_are_normalized_and_translated(make_project: object) -> None:
    project: Project = make_project()  # type: ignore[operator]
    config = project.root / "toolgen.yaml"
    config.write_text(config.read_text() + "normalize: [types]\nremotes: {'https://example.com/lib/': vendor/lib/}\n")
    tool = {
        "name": "named",
        "inputSchema": {
            "$id": "https://example.com/tools/named",
            "type": "object",
            "minProperties": 1,
            "properties": {
                "n": {"$ref": "https://example.com/lib/names.json#/Name"},
                "c": {"$ref": "https://example.com/lib/names.json#/Count"},
            },
        },
    }
    project.write("schemas/tools.json", json.dumps({"tools": [tool]}))
    names = {"Name": {"type": "string", "pattern": "^\\p{Lu}\\p{Ll}+$"}, "Count": {"type": "int"}}
    project.write("vendor/lib/names.json", json.dumps(names))
    toolgen.build(project.root)
    code = """
    import json, sdk
    def outcome(data):
        try:
            sdk.validate_tool_arguments("named", data)
            return True
        except sdk.ToolgenValidationError as error:
            return [[p.pointer, p.message] for p in error.problems]
    resources = sdk.TOOLS["named"].check_resources
    print(json.dumps({"resources": resources, "ok": outcome({"n": "Ñandu", "c": 2}), "bad": outcome({"n": "ñandu"})}))
    """
    out = run_sdk(project.root, code)
    assert out["resources"]["https://example.com/lib/names.json"]["Count"]["type"] == "integer"
    assert out["ok"] is True
    # The pattern as the schema wrote it, not as Python's repr doubles its backslashes.
    assert out["bad"] == [["/n", "expected a string matching '^\\p{Lu}\\p{Ll}+$', got \"ñandu\""]]


def test_a_meta_schema_without_the_validation_vocabulary_turns_its_keywords_off(make_project: object) -> None:
    project: Project = make_project()  # type: ignore[operator]
    config = project.root / "toolgen.yaml"
    config.write_text(config.read_text() + "remotes: {'https://example.com/meta/': vendor/meta/}\n")
    meta = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.com/meta/no-validation.json",
        "$vocabulary": {
            "https://json-schema.org/draft/2020-12/vocab/applicator": True,
            "https://json-schema.org/draft/2020-12/vocab/core": True,
        },
    }
    project.write("vendor/meta/no-validation.json", json.dumps(meta))
    schema = {
        "$schema": "https://example.com/meta/no-validation.json",
        "properties": {"count": {"type": "integer", "minimum": 10}, "banned": False, "m": {"$ref": "#/$defs/M"}},
        "required": ["count"],
        "$defs": {"M": {"type": "integer"}},
    }
    # The published 2019-09 meta-schema names its own validation vocabulary: its keywords stay on.
    older = {
        "$schema": "https://json-schema.org/draft/2019-09/schema",
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 3}},
        "required": ["n"],
    }
    tools = [{"name": "loose", "inputSchema": schema}, {"name": "older", "inputSchema": older}]
    project.write("schemas/tools.json", json.dumps({"tools": tools}))
    toolgen.build(project.root)
    code = """
    import json, sdk
    def outcome(data):
        try:
            sdk.validate_tool_arguments("loose", data)
            return True
        except sdk.ToolgenValidationError as error:
            return [p.pointer for p in error.problems]
    def older(data):
        try:
            sdk.validate_tool_arguments("older", data)
            return True
        except sdk.ToolgenValidationError as error:
            return [p.pointer for p in error.problems]
    loose = [outcome({"count": 1}), outcome({}), outcome({"count": "x"}), outcome({"banned": 1}), outcome({"m": "x"})]
    print(json.dumps([loose, [older({"n": 1}), older({}), older({"n": 5})]]))
    """
    # type, minimum and required are annotations under this meta-schema, in $ref targets of the same resource
    # too; `false` is an applicator's.
    loose, older = run_sdk(project.root, code)
    assert loose == [True, True, True, ["/banned"], True]
    assert older == [["/n"], ["/n"], True]


# ---- file references stay in the project ----

SECRET = {"$defs": {"Token": {"type": "string", "const": "s3cr3t-value"}}}


def _referring(project: Project, ref: str) -> None:
    tool = (
        f"tools:\n  - name: t\n    inputSchema:\n      type: object\n      properties:\n        a: {{$ref: '{ref}'}}\n"
    )
    project.write("schemas/t.yaml", tool)


def _outside(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("machine")
    (folder / "secret.json").write_text(json.dumps(SECRET))
    return folder


@pytest.mark.parametrize("form", ["absolute", "climb", "link", "linked-folder", "file-url", "etc"])
def test_a_ref_to_a_file_outside_the_project_is_refused_at_its_place(
    make_project: Any, tmp_path_factory: pytest.TempPathFactory, form: str
) -> None:
    project: Project = make_project()
    machine = _outside(tmp_path_factory)
    secret = machine / "secret.json"
    (project.root / "defs").mkdir()
    (project.root / "defs" / "token.json").symlink_to(secret)  # a link inside the project, leading out
    (project.root / "shared").symlink_to(machine, target_is_directory=True)
    climb = "/".join([".."] * len(project.root.resolve().parts[1:]))  # from schemas/ up to / and down again
    ref, target = {
        "absolute": (f"{secret}#/$defs/Token", secret),
        "climb": (f"../{climb}{secret}#/$defs/Token", secret),
        "link": ("../defs/token.json#/$defs/Token", secret),
        "linked-folder": ("../shared/secret.json#/$defs/Token", secret),
        "file-url": (f"{secret.as_uri()}#/$defs/Token", secret),
        "etc": ("file:///etc/passwd", "/etc/passwd"),
    }[form]
    _referring(project, ref)
    with pytest.raises(InvalidInputError) as caught:
        toolgen.build(project.root)
    [found] = caught.value.diagnostics
    assert (found.path, found.line, found.col, found.rule) == ("schemas/t.yaml", 6, 19, "ref-outside")
    assert found.pointer == "/tools/0/inputSchema/properties/a/$ref"
    assert f"points at {Path(target).resolve()}," in found.message and "`ref_roots:`" in found.message
    if form.startswith("link"):
        assert "symbolic link" in found.message
    # The CLI: exit 3, the finding at its place, nothing of the file's content anywhere, nothing written.
    result = project.cli("build")
    assert result.returncode == 3
    assert result.stdout.startswith("schemas/t.yaml:6:19: error ref-outside $ref ")
    assert "s3cr3t" not in result.stdout + result.stderr and not project.package_dir.exists()


def test_ref_roots_allow_folders_outside_the_project(
    make_project: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    project: Project = make_project()
    machine = _outside(tmp_path_factory)
    (project.root / "defs").mkdir()
    (project.root / "defs" / "token.json").symlink_to(machine / "secret.json")
    relative = os.path.relpath(machine, project.root)
    config = project.root / "toolgen.yaml"
    config.write_text(config.read_text() + f"ref_roots: [{relative}]\n")
    for ref in (f"{machine / 'secret.json'}#/$defs/Token", "../defs/token.json#/$defs/Token"):
        _referring(project, ref)
        toolgen.build(project.root, force=True)
        assert any("s3cr3t-value" in path.read_text() for path in project.package_dir.rglob("*.py"))
    # Files in the project may be named by path or by file: URL; nothing outside the roots is.
    project.write("schemas/own.json", json.dumps(SECRET))
    _referring(project, f"{(project.root / 'schemas' / 'own.json').as_uri()}#/$defs/Token")
    toolgen.build(project.root, force=True)
    _referring(project, "file:///etc/passwd")
    with pytest.raises(InvalidInputError) as caught:
        toolgen.build(project.root)
    assert [d.rule for d in caught.value.diagnostics] == ["ref-outside"]


def test_a_remote_ref_is_never_fetched(make_project: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise OSError("no network in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    project: Project = make_project()
    for ref in ("https://example.com/schemas/s.json", "http://localhost:1234/x.json#/a"):
        _referring(project, ref)
        with pytest.raises(InvalidInputError) as caught:
            toolgen.build(project.root)
        assert [d.rule for d in caught.value.diagnostics] == ["ref-remote"]
    _referring(project, "file://example.com/etc/passwd")
    with pytest.raises(InvalidInputError) as caught:
        toolgen.build(project.root)
    [found] = caught.value.diagnostics
    assert found.rule == "ref-file" and "no host" in found.message
    assert attempts == []


def test_a_vendored_folder_that_links_out_of_the_project_is_outside(
    make_project: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    machine = _outside(tmp_path_factory)
    (machine / "money.json").write_text(json.dumps({"$defs": {"amount": {"$ref": "secret.json#/$defs/Token"}}}))
    project = _project(make_project, "remotes: {'https://example.com/shared/': vendor/shared/}\n")
    shutil.rmtree(project.root / "vendor" / "shared")
    (project.root / "vendor" / "shared").symlink_to(machine, target_is_directory=True)
    with pytest.raises(InvalidInputError) as caught:
        toolgen.build(project.root)
    [found] = caught.value.diagnostics
    assert (found.rule, found.pointer) == ("ref-outside", "/tools/0/inputSchema/properties/price/$ref")
    assert f"points at {(machine / 'money.json').resolve()}," in found.message
    # Named outside the project in toolgen.yaml, the folder is the config's choice, and so are its neighbours.
    config = project.root / "toolgen.yaml"
    config.write_text(config.read_text().replace("vendor/shared/", f"{machine}/"))
    toolgen.build(project.root)
    assert any("s3cr3t-value" in path.read_text() for path in project.package_dir.rglob("*.py"))
