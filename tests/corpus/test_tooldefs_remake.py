"""Real tool definitions, edited one after another: each rebuild, which makes again only the edited tools' models
when it can, writes byte for byte what a build from nothing writes."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.projects import shared_dir
from support.tooldefs_build import distinct_definitions

import toolgen
import toolgen.codegen.targets.model_remake as model_remake
from toolgen.core.errors import InvalidInputError

# Candidates spread over the corpus; those the build refuses (a name taken twice, a schema it rejects) are left out.
SAMPLE = 150
CONFIG = "version: v1\npackage: corpus_sdk\noutput: generated\ninputs: [tools.json]\nnormalize: [types]\n"


def _write(root: Path, tools: list[dict[str, Any]]) -> None:
    (root / "tools.json").write_text(json.dumps({"tools": tools}, indent=1, ensure_ascii=False), encoding="utf-8")


def _buildable(root: Path, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`tools` without those the build refuses, built at `root`."""
    while True:
        _write(root, tools)
        try:
            toolgen.build(root)
            return tools
        except InvalidInputError as error:
            refused = {
                int(parts[2])
                for parts in (d.pointer.split("/") for d in error.diagnostics if d.severity.value == "error")
                if len(parts) > 2 and parts[1] == "tools" and parts[2].isdigit()
            }
            assert refused, [d.format() for d in error.diagnostics]
            tools = [tool for index, tool in enumerate(tools) if index not in refused]


def _schema(tool: dict[str, Any]) -> dict[str, Any] | None:
    for holder in (tool.get("function"), tool.get("toolSpec"), tool):
        if isinstance(holder, dict):
            for key in ("parameters", "inputSchema", "input_schema"):
                found = holder.get(key)
                if isinstance(found, dict) and "json" in found and isinstance(found["json"], dict):
                    found = found["json"]
                if isinstance(found, dict) and isinstance(found.get("properties"), dict):
                    return found
    return None


def _describe(schema: dict[str, Any], step: int) -> None:
    schema["description"] = f"Edited, step {step}."


def _add_object(schema: dict[str, Any], step: int) -> None:
    item = {"type": "object", "properties": {"level": {"type": "integer"}, "tags": {"type": "array", "items": {}}}}
    schema["properties"][f"added_{step}"] = {"type": "object", "properties": {"rows": {"type": "array", "items": item}}}


def _drop_first(schema: dict[str, Any], step: int) -> None:
    first = next(iter(schema["properties"]), None)
    if first is not None:
        del schema["properties"][first]
        if isinstance(schema.get("required"), list):
            schema["required"] = [name for name in schema["required"] if name != first]


def _add_enum(schema: dict[str, Any], step: int) -> None:
    schema["properties"][f"mode_{step}"] = {"type": "string", "enum": ["fast", "slow"], "default": "fast"}


EDITS: tuple[Callable[[dict[str, Any], int], None], ...] = (_describe, _add_object, _drop_first, _add_enum)


@pytest.mark.slow
def test_edited_corpus_tools_rebuild_as_a_build_from_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    definitions = [raw for _, raw in distinct_definitions(shared_dir("tooldefs"))]
    step = max(1, len(definitions) // SAMPLE)
    root = tmp_path / "project"
    root.mkdir()
    (root / "toolgen.yaml").write_text(CONFIG, encoding="utf-8")
    tools = _buildable(root, [json.loads(json.dumps(raw)) for raw in definitions[::step][:SAMPLE]])
    assert len(tools) >= 40
    made: list[bool] = []
    real = model_remake.remake_tools

    def recorded(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        made.append(result is not None)
        return result

    monkeypatch.setattr(model_remake, "remake_tools", recorded)
    editable = [index for index, tool in enumerate(tools) if _schema(tool) is not None]
    for number in range(12):
        schema = _schema(tools[editable[(number * 7) % len(editable)]])
        assert schema is not None
        EDITS[number % len(EDITS)](schema, number)
        _write(root, tools)
        toolgen.build(root)
        fresh = tmp_path / f"fresh{number}"
        fresh.mkdir()
        shutil.copy2(root / "toolgen.yaml", fresh / "toolgen.yaml")
        shutil.copy2(root / "tools.json", fresh / "tools.json")
        toolgen.build(fresh)
        ours, theirs = _files(root / "generated"), _files(fresh / "generated")
        assert ours.keys() == theirs.keys(), f"step {number}"
        assert [name for name in ours if ours[name] != theirs[name]] == [], f"step {number}"
    assert sum(made) >= 4, f"the remake ran too seldom to be tested: {made}"


def _files(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }
