"""The tools the build benchmarks measure: corpus selection or synthetic stand-ins, projects and their schemas."""

from __future__ import annotations

import itertools
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "tooldefs"
PACKAGE = "bench_sdk"


def _name_of(raw: dict[str, Any]) -> Any:
    for holder in (raw, raw.get("function"), raw.get("toolSpec")):
        if isinstance(holder, dict) and "name" in holder:
            return holder["name"]
    return raw.get("api_name")


def _corpus_candidates() -> Iterator[dict[str, Any]]:
    sys.path.insert(0, str(REPO / "tests"))
    try:
        from support.tooldefs_corpus import iter_corpus_tools
    finally:
        sys.path.remove(str(REPO / "tests"))
    seen: set[str] = set()
    for tool in iter_corpus_tools(CORPUS):
        name = _name_of(tool.raw)
        if isinstance(name, str) and name not in seen:
            seen.add(name)
            yield tool.raw


def write_project(root: Path, defs: list[dict[str, Any]]) -> Path:
    """A project at `root` whose one input, tools.json, holds `defs`, normalized as the corpus needs."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "toolgen.yaml").write_text(
        f"version: v1\npackage: {PACKAGE}\noutput: generated\ninputs: [tools.json]\nnormalize: [types]\n",
        encoding="utf-8",
    )
    (root / "tools.json").write_text(json.dumps({"tools": defs}, indent=1, ensure_ascii=False), encoding="utf-8")
    return root


def _rejected(root: Path) -> set[int]:
    """Indexes of the tools in root/tools.json that toolgen's front end rejects (any error diagnostic)."""
    from toolgen.core.errors import InvalidInputError
    from toolgen.ir.lower import lower
    from toolgen.policy.build_lint import build_lint
    from toolgen.project.config import load_config

    try:
        config = load_config(root)
        build_lint(config, lower(config))  # what a build refuses beyond the front end: its providers' lint
    except InvalidInputError as error:
        bad = set()
        for diagnostic in error.diagnostics:
            if diagnostic.severity.value != "error":
                continue
            parts = diagnostic.pointer.split("/")
            if len(parts) < 3 or parts[1] != "tools" or not parts[2].isdigit():
                raise RuntimeError(f"diagnostic not tied to one tool: {diagnostic.format()}") from None
            bad.add(int(parts[2]))
        return bad
    return set()


def corpus_tools(count: int, scratch: Path) -> list[dict[str, Any]]:
    """The first `count` distinct-named corpus definitions that toolgen accepts with normalize: [types]."""
    candidates = _corpus_candidates()
    accepted: list[dict[str, Any]] = []
    rejected = 0
    while True:  # until a round rejects nothing: the lint runs only once the front end takes every tool
        batch = list(itertools.islice(candidates, count - len(accepted) + 50 if len(accepted) < count else 0))
        trial = accepted + batch
        bad = _rejected(write_project(scratch / "select", trial))
        rejected += len(bad)
        accepted = [d for i, d in enumerate(trial) if i not in bad]
        if not bad and len(accepted) >= count or len(accepted) < count and not batch:
            break
    if len(accepted) < count:
        raise RuntimeError(f"the corpus has only {len(accepted)} usable definitions, {count} wanted")
    print(
        f"selected {count} corpus definitions ({rejected} rejected by toolgen's front end or lint along the way)",
        flush=True,
    )
    return accepted[:count]


_WORDS = (
    "account",
    "customer",
    "order",
    "invoice",
    "file",
    "folder",
    "message",
    "channel",
    "user",
    "project",
    "issue",
    "repository",
    "branch",
    "ticket",
    "event",
    "calendar",
    "location",
    "city",
    "country",
    "currency",
    "amount",
    "price",
    "product",
    "query",
    "page",
    "limit",
    "status",
    "region",
    "language",
    "model",
    "image",
    "document",
    "record",
    "metric",
)


def synthetic_tools(count: int) -> list[dict[str, Any]]:
    """Stand-ins shaped like the corpus: OpenAI-style function declarations, 1-8 parameters, enums,
    bounds, arrays and the odd nested object."""
    rng = random.Random(20240601)
    tools = []
    for index in range(count):
        verb = rng.choice(["get", "list", "create", "update", "delete", "search", "send", "compute"])
        noun = rng.choice(_WORDS)
        properties: dict[str, Any] = {}
        for _ in range(rng.randint(1, 8)):
            pname = f"{rng.choice(_WORDS)}_{rng.choice(['id', 'name', 'count', 'type', 'list', 'filter', 'options'])}"
            kind = rng.choice(["string", "string", "integer", "number", "boolean", "enum", "array", "object"])
            description = f"The {pname.replace('_', ' ')} to use for this {noun} request."
            if kind == "enum":
                prop: dict[str, Any] = {"type": "string", "enum": rng.sample(_WORDS, 3), "description": description}
            elif kind == "array":
                prop = {"type": "array", "items": {"type": "string"}, "description": description}
            elif kind == "object":
                prop = {
                    "type": "object",
                    "description": description,
                    "properties": {
                        "start": {"type": "string", "description": "Start of the range."},
                        "end": {"type": "string", "description": "End of the range."},
                    },
                    "required": ["start"],
                }
            elif kind == "integer":
                prop = {"type": "integer", "minimum": 0, "maximum": 1000, "description": description}
            else:
                prop = {"type": kind, "description": description}
            properties[pname] = prop
        required = sorted(rng.sample(sorted(properties), rng.randint(0, len(properties))))
        tools.append(
            {
                "name": f"{verb}_{noun}_{index}",
                "description": f"{verb.capitalize()} a {noun} and return the result as JSON.",
                "parameters": {"type": "object", "properties": properties, "required": required},
            }
        )
    return tools


def model_schemas(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """(class name, standalone JSON Schema) of every tool model of the project, tools in file order."""
    from toolgen.ir.lower import lower
    from toolgen.ir.model import thaw
    from toolgen.project.config import load_config

    project = lower(load_config(root)).project
    order = {
        _name_of(d): i for i, d in enumerate(json.loads((root / "tools.json").read_text(encoding="utf-8"))["tools"])
    }
    schemas: list[tuple[str, dict[str, Any]]] = []
    for tool in sorted(project.tools, key=lambda t: order[t.name]):
        schemas.append((tool.args_model, {"title": tool.args_model, **thaw(tool.input_schema)}))
        if tool.result_model and tool.output_schema:
            schemas.append((tool.result_model, {"title": tool.result_model, **thaw(tool.output_schema)}))
    return schemas


def combined_schema(schemas: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """All schemas as `$defs` of one document (their own `$defs` hoisted; toolgen names them globally)."""
    defs: dict[str, Any] = {}
    for name, schema in schemas:
        body = dict(schema)
        defs.update(body.pop("$defs", {}))
        defs[name] = body
    return {"title": "Root", "$defs": defs}
