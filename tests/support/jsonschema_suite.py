"""Run the official JSON Schema test suite (draft 2020-12) through generated validators and score agreement per keyword."""

from __future__ import annotations

import importlib
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import toolgen
from support.projects import REPO_ROOT
from toolgen.core.diagnostics import Severity
from toolgen.core.errors import ExternalToolError, InvalidInputError

CHUNK = 200


@dataclass(frozen=True)
class Group:
    keyword: str
    description: str
    schema: Any
    tests: tuple[tuple[str, Any, bool], ...]


@dataclass
class Score:
    """Per keyword file: tests that agree, silent accepts of invalid data, rejects of valid data, tests refused."""

    agree: Counter[str] = field(default_factory=Counter)
    silent_accept: Counter[str] = field(default_factory=Counter)
    false_reject: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    raised: Counter[str] = field(default_factory=Counter)
    crashed: list[tuple[str, str]] = field(default_factory=list)
    misses: list[tuple[str, str, str, Any, bool]] = field(default_factory=list)

    def total(self, keyword: str | None = None) -> int:
        counters = (self.agree, self.silent_accept, self.false_reject, self.refused, self.raised)
        if keyword is None:
            return sum(sum(c.values()) for c in counters)
        return sum(c[keyword] for c in counters)


def groups(suite: Path) -> Iterator[Group]:
    """Every test group of the required draft 2020-12 tests, in file order."""
    for path in sorted((suite / "tests" / "draft2020-12").glob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            tests = tuple((t["description"], t["data"], bool(t["valid"])) for t in group["tests"])
            yield Group(path.stem, group["description"], group["schema"], tests)


# The suite's remote documents, served at http://localhost:1234/ in its own runner, vendored with `remotes`.
REMOTES = REPO_ROOT.parent / "shared" / "json-schema-test-suite" / "remotes"


def _write(root: Path, package: str, chunk: list[tuple[int, Group]]) -> None:
    (root / "toolgen.yaml").write_text(
        f"version: v1\npackage: {package}\noutput: generated\ninputs: [tools.json]\n"
        f"remotes: {{'http://localhost:1234/': {json.dumps(str(REMOTES))}}}\n",
        encoding="utf-8",
    )
    tools = [{"name": f"g{index}", "inputSchema": group.schema} for index, group in chunk]
    (root / "tools.json").write_text(json.dumps({"tools": tools}, ensure_ascii=False), encoding="utf-8")


def _build(
    root: Path, package: str, chunk: list[tuple[int, Group]]
) -> tuple[list[tuple[int, Group]], set[int], set[int]]:
    """Build the chunk: groups the build refuses with a diagnostic, and groups it fails on, are left out."""
    refused: set[int] = set()
    crashed: set[int] = set()
    while True:
        kept = [(i, g) for i, g in chunk if i not in refused | crashed]
        _write(root, package, kept)
        try:
            toolgen.build(root)
            return kept, refused, crashed
        except InvalidInputError as error:
            new = set()
            # Warnings (a default that does not fit its schema) travel with the errors; only errors refuse.
            for diagnostic in (d for d in error.diagnostics if d.severity is Severity.ERROR):
                parts = diagnostic.pointer.split("/")
                if len(parts) > 2 and parts[1] == "tools" and parts[2].isdigit():
                    new.add(kept[int(parts[2])][0])
            if not new:
                # A problem inside a vendored document names no tool: find the groups that reach it by halving.
                new = _culprits(root, package, kept, InvalidInputError)
            refused |= new
        except ExternalToolError:
            crashed |= _culprits(root, package, kept)


def _culprits(
    root: Path, package: str, chunk: list[tuple[int, Group]], failure: type[Exception] = ExternalToolError
) -> set[int]:
    """The groups a build fails on with `failure`, found by halving."""
    if len(chunk) == 1:
        return {chunk[0][0]}
    found: set[int] = set()
    for half in (chunk[: len(chunk) // 2], chunk[len(chunk) // 2 :]):
        _write(root, package, half)
        try:
            toolgen.build(root)
        except failure:
            found |= _culprits(root, package, half, failure)
        except (InvalidInputError, ExternalToolError):
            continue
    return found


def _accepts(spec: Any, runtime: Any, data: Any) -> bool | str:
    """True/False for accept/reject, or the exception's name when validation raised something else."""
    try:
        if hasattr(spec, "check_arguments"):
            spec.check_arguments(json.dumps(data))
        else:
            runtime.check(spec.args_model, json.dumps(data))
    except runtime.ToolgenValidationError:
        return False
    except Exception as error:  # noqa: BLE001 - a validator that raises anything else is a finding
        return type(error).__name__
    return True


def score(suite: Path) -> Score:
    result = Score()
    everything = list(enumerate(groups(suite)))
    for start in range(0, len(everything), CHUNK):
        chunk = everything[start : start + CHUNK]
        package = f"suite_chunk_{start}"
        with tempfile.TemporaryDirectory(prefix="jsts-") as scratch:
            root = Path(scratch)
            built, refused, crashed = _build(root, package, chunk)
            for index, group in chunk:
                if index in refused | crashed:
                    result.refused[group.keyword] += len(group.tests)
                if index in crashed:
                    result.crashed.append((group.keyword, group.description))
            sys.path.insert(0, str(root / "generated"))
            try:
                module = importlib.import_module(package)
                runtime = importlib.import_module(f"{package}._runtime")
                for index, group in built:
                    spec = module.TOOLS[f"g{index}"]
                    for description, data, valid in group.tests:
                        accepted = _accepts(spec, runtime, data)
                        if isinstance(accepted, str):
                            result.raised[group.keyword] += 1
                            result.misses.append((group.keyword, group.description, f"raised {accepted}", data, valid))
                            continue
                        if accepted == valid:
                            result.agree[group.keyword] += 1
                            continue
                        (result.silent_accept if accepted else result.false_reject)[group.keyword] += 1
                        result.misses.append((group.keyword, group.description, description, data, valid))
            finally:
                sys.path.remove(str(root / "generated"))
    return result


def markdown_report(suite: Path) -> str:
    result = score(suite)
    keywords = sorted(
        set(result.agree)
        | set(result.silent_accept)
        | set(result.false_reject)
        | set(result.refused)
        | set(result.raised)
    )
    lines = [
        "| keyword | tests | agree | silent accepts | rejects of valid data | refused by the build | validator raised |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for keyword in [*keywords, None]:
        counters = [result.agree, result.silent_accept, result.false_reject, result.refused, result.raised]
        values = [sum(c.values()) if keyword is None else c[keyword] for c in counters]
        lines.append(f"| {keyword or '**all**'} | {result.total(keyword)} | " + " | ".join(map(str, values)) + " |")
    total = result.total()
    agree = sum(result.agree.values())
    lines.append("")
    lines.append(f"Agreement: {agree} of {total} ({100 * agree / total:.1f}%).")
    for keyword, description in result.crashed:
        lines.append(f"- build failed (not a diagnostic): {keyword}: {description}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    suite_root = REPO_ROOT.parent / "shared" / "json-schema-test-suite"
    if len(sys.argv) > 1 and sys.argv[1] == "--misses":
        for miss in score(suite_root).misses:
            print(miss)
    else:
        print(markdown_report(suite_root))
