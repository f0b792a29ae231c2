"""Build the tooldefs corpus in chunks and classify every definition: built into importable models, or rejected.

Two definitions with one name cannot share a build (the second is a duplicate tool), and the corpus repeats some
names dozens of times, which would take as many builds. A definition whose name an earlier one has is built under
a numbered name no definition has (`get_current_weather_2`): a name plays no part in whether a definition builds
beyond being one non-empty string, so its outcome is the same, and the chunks stay few and full.
"""

from __future__ import annotations

import importlib
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import toolgen
from toolgen.config import load_config
from toolgen.errors import InvalidInputError
from toolgen.lower import lower

CHUNK = 400


@dataclass(frozen=True)
class Outcome:
    key: int
    built: bool
    rule: str = ""
    message: str = ""


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def built(self) -> int:
        return sum(o.built for o in self.outcomes)

    @property
    def rejected(self) -> Counter[str]:
        return Counter(o.rule for o in self.outcomes if not o.built)


def _numbered_duplicates(defs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """`defs` with every repeated `name` after the first made unique by a number (see the module docstring)."""
    taken = {raw["name"] for raw in defs if isinstance(raw.get("name"), str)}
    seen: set[str] = set()
    result = []
    for raw in defs:
        name = raw.get("name")
        if isinstance(name, str) and name and name in seen:
            number = 2
            while f"{name}_{number}" in taken:
                number += 1
            taken.add(f"{name}_{number}")
            raw = {**raw, "name": f"{name}_{number}"}
        elif isinstance(name, str):
            seen.add(name)
        result.append(raw)
    return result


def _chunks(defs: Sequence[dict[str, Any]]) -> list[list[int]]:
    """Indexes grouped so that no chunk holds two definitions with the same name."""
    chunks: list[tuple[set[str], list[int]]] = []
    for index, raw in enumerate(defs):
        name = str(raw.get("name", raw.get("api_name", index)))
        target = next((c for c in chunks if name not in c[0] and len(c[1]) < CHUNK), None)
        if target is None:
            target = (set(), [])
            chunks.append(target)
        target[0].add(name)
        target[1].append(index)
    return [indexes for _, indexes in chunks]


def _write_project(root: Path, package: str, defs: Iterable[dict[str, Any]], normalize: bool) -> None:
    config = f"version: v1\npackage: {package}\noutput: generated\ninputs: [tools.json]\n"
    if normalize:
        config += "normalize: [types, shapes]\n"
    (root / "toolgen.yaml").write_text(config, encoding="utf-8")
    (root / "tools.json").write_text(json.dumps({"tools": list(defs)}, indent=1, ensure_ascii=False), encoding="utf-8")


def _tool_index(pointer: str) -> int | None:
    parts = pointer.split("/")
    return int(parts[2]) if len(parts) > 2 and parts[1] == "tools" and parts[2].isdigit() else None


def _rejects(error: InvalidInputError, number: int) -> dict[int, Outcome]:
    outcomes: dict[int, Outcome] = {}
    for diagnostic in (d for d in error.diagnostics if d.severity.value == "error"):
        index = _tool_index(diagnostic.pointer)
        if index is None:
            raise AssertionError(f"chunk {number}: diagnostic not tied to one tool: {diagnostic.format()}") from None
        outcomes.setdefault(index, Outcome(index, False, diagnostic.rule, diagnostic.message))
    return outcomes


def _import_names(root: Path, package: str) -> set[str]:
    sys.path.insert(0, str(root / "generated"))
    try:
        module = importlib.import_module(package)
        for spec in module.TOOLS.values():
            spec.args_model.model_json_schema()  # forces every forward reference to resolve
            if spec.result_model is not None:
                spec.result_model.model_json_schema()
        return set(module.TOOLS)
    finally:
        sys.path.remove(str(root / "generated"))
        # The chunk's package is never imported again: kept, its models would make every later garbage
        # collection of this worker slower.
        for loaded in [name for name in sys.modules if name == package or name.startswith(package + ".")]:
            del sys.modules[loaded]


def build_chunk(job: tuple[int, list[dict[str, Any]], bool, bool]) -> list[Outcome]:
    """Build the chunk; when some definitions are rejected, build again without them and import the result."""
    number, defs, normalize, render = job
    outcomes: dict[int, Outcome] = {}
    with tempfile.TemporaryDirectory(prefix="tooldefs-") as scratch:
        root = Path(scratch)
        package = f"corpus_chunk_{number}"
        _write_project(root, package, defs, normalize)
        try:
            if render:
                toolgen.build(root)
            else:
                lower(load_config(root))
        except InvalidInputError as error:
            outcomes = _rejects(error, number)
            if render:
                _write_project(root, package, (d for i, d in enumerate(defs) if i not in outcomes), normalize)
                toolgen.build(root)
        accepted = [i for i in range(len(defs)) if i not in outcomes]
        if not render:
            return [outcomes.get(i, Outcome(i, True)) for i in range(len(defs))]
        names = _import_names(root, package)
        for i in accepted:
            name = defs[i].get("name") or defs[i].get("api_name") or (defs[i].get("function") or {}).get("name")
            outcomes[i] = Outcome(i, name in names, "" if name in names else "missing-after-build")
    return [outcomes[i] for i in range(len(defs))]


def classify(defs: Sequence[dict[str, Any]], normalize: bool, *, render: bool = True, workers: int = 2) -> Report:
    """Every definition's outcome; with render=False only the front end runs (what would be rejected)."""
    defs = _numbered_duplicates(defs)
    chunks = _chunks(defs)
    jobs = [(n, [defs[i] for i in indexes], normalize, render) for n, indexes in enumerate(chunks)]
    report = Report()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for indexes, results in zip(chunks, pool.map(build_chunk, jobs), strict=True):
            report.outcomes.extend(Outcome(indexes[o.key], o.built, o.rule, o.message) for o in results)
    report.outcomes.sort(key=lambda o: o.key)
    return report


def distinct_definitions(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """(source key, definition) for every distinct definition across the corpus."""
    from tooldefs_corpus import canonical_json, iter_corpus_tools

    unique: dict[str, tuple[str, dict[str, Any]]] = {}
    for tool in iter_corpus_tools(root):
        unique.setdefault(canonical_json(tool.raw), (tool.source.split("/")[0], tool.raw))
    return list(unique.values())


def markdown_report(root: Path) -> str:
    """The README's corpus table: per source, built as written and after `normalize: [types, shapes]`."""
    entries = distinct_definitions(root)
    defs = [raw for _, raw in entries]
    plain = classify(defs, False, render=False)
    normalized = classify(defs, True)
    sources = sorted({source for source, _ in entries})
    lines = [
        "| source | distinct definitions | build as written | build with `normalize: [types, shapes]` | rejected (rule: count) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for source in sorted(sources) + ["total"]:
        picked = [i for i, (s, _) in enumerate(entries) if source in (s, "total")]
        built_plain = sum(plain.outcomes[i].built for i in picked)
        built_norm = sum(normalized.outcomes[i].built for i in picked)
        rules = Counter(normalized.outcomes[i].rule for i in picked if not normalized.outcomes[i].built)
        listed = ", ".join(f"{rule}: {count}" for rule, count in sorted(rules.items())) or "none"
        lines.append(f"| {source} | {len(picked)} | {built_plain} | {built_norm} | {listed} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown_report(Path(__file__).resolve().parents[2] / "shared" / "tooldefs"))
