"""Extract every raw tool/function definition, in its source dialect, from the tooldefs corpus."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

# (glob under the corpus root, pointer pattern within each JSON document or JSONL line; "*" is
# every item or value). Files no glob matches hold no definitions: possible_answer/ and other
# ground-truth or call data, question files whose tools live elsewhere, taxonomies, the TaskWeaver
# meta-schema, Sentry's per-skill re-listing of tools.
_RULES: tuple[tuple[str, str], ...] = (
    ("bfcl/**/data/BFCL_*.json", "/function/*"),
    ("bfcl/**/multi_turn_func_doc/*.json", ""),
    ("acebench/data_all/*/data_*.json", "/function/*"),
    ("seal-tools/**/tool.jsonl", ""),
    ("nestful/**/*-spec.json", "/*"),
    ("github-mcp-server/**/__toolsnaps__/*.snap", ""),
    ("docker-mcp-registry/servers/*/tools.json", "/*"),
    ("sentry-mcp/**/toolDefinitions.json", "/*"),
    ("livemcpbench/tools/**/tools.json", "/*/tools/*/tools/*"),
    ("taskweaver/**/plugins/*.yaml", ""),
    ("toolbench/**/instruction/*_query.json", "/*/api_list/*"),
    ("toolbench/**/answer/*/*.json", "/answer_generation/function/*"),
)


@dataclass(frozen=True)
class CorpusTool:
    source: str
    locator: str
    raw: dict[str, Any]


def canonical_json(raw: dict[str, Any]) -> str:
    return json.dumps(raw, sort_keys=True, ensure_ascii=False, default=str)


def iter_corpus_tools(root: Path) -> Iterator[CorpusTool]:
    for pattern, pointer in _RULES:
        for path in sorted(root.glob(pattern)):
            yield from _file_tools(path, path.relative_to(root).as_posix(), pointer)


def _file_tools(path: Path, source: str, pointer: str) -> Iterator[CorpusTool]:
    seen: set[str] = set()
    for line, document in _documents(path):
        for where, raw in _resolve(document, pointer.split("/")[1:], ""):
            locator = f"{line} {where}".strip()
            if not isinstance(raw, dict):
                raise TypeError(f"{source} {locator}: not a definition object: {raw!r:.60}")
            key = canonical_json(raw)
            if key not in seen:
                seen.add(key)
                yield CorpusTool(source, locator, raw)


def _documents(path: Path) -> list[tuple[str, Any]]:
    # Bytes, not read_text: newline translation would turn a lone \r into an extra JSONL line.
    text = path.read_bytes().decode("utf-8")
    if path.suffix in (".yaml", ".yml"):
        return [("", yaml.safe_load(text))]
    try:
        return [("", json.loads(text))]
    except json.JSONDecodeError:
        # BFCL/ACEBench name their JSON Lines files *.json. Split on "\n" only: str.splitlines
        # would also break on U+2028 and friends, which JSON allows raw inside strings.
        lines = enumerate(text.split("\n"), 1)
        return [(f"line {n}", json.loads(line)) for n, line in lines if line.strip()]


def _resolve(node: Any, steps: list[str], here: str) -> Iterator[tuple[str, Any]]:
    if not steps:
        yield here, node
        return
    for key, child in _children(node, steps[0]):
        yield from _resolve(child, steps[1:], f"{here}/{_escape(key)}")


def _children(node: Any, step: str) -> list[tuple[str, Any]]:
    if isinstance(node, list) and step == "*":
        return [(str(i), child) for i, child in enumerate(node)]
    if isinstance(node, dict):
        if step == "*":
            return [(str(key), child) for key, child in node.items()]
        return [(step, node[step])] if step in node else []
    return []


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")
