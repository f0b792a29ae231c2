"""Build the tooldefs corpus in chunks and classify every definition: built into importable models, or rejected.

Two definitions with one name cannot share a build (the second is a duplicate tool), and the corpus repeats some
names dozens of times, which would take as many builds. A definition whose name an earlier one has is built under
a numbered name no definition has (`get_current_weather_2`): a name plays no part in whether a definition builds
beyond being one non-empty string, so its outcome is the same, and the chunks stay few and full.

A build that succeeds has passed its staged check (toolgen.output.sdk_check): a fresh interpreter imported every module
of the package, every per-tool model module included, and ran each tool's validators on example arguments (and an
example result), which completes each model, forward references and all. So a built chunk's package is imported
here only for the names in its TOOLS, and its models are not loaded a second time.

Every job of a run (chunks to build, chunks whose front end alone runs) goes to one pool, the costliest first, so
that neither core waits while the other finishes a long last chunk. Each worker builds its chunks one after another
in one project of its own, in memory where the platform has a memory file system: a build there moves away the
package of the chunk before, as it would after a change of `package:`, and the staged check reuses what it
compiled of the runtime, whose files are the same in every chunk.
"""

from __future__ import annotations

import gc
import importlib
import json
import multiprocessing
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import toolgen
from support.projects import REPO_ROOT
from toolgen.core.errors import InvalidInputError
from toolgen.ir.lower import lower
from toolgen.project.config import load_config

CHUNK = 400
WORKERS = 2
# Where the projects are built: a memory file system, where creating and removing a package's thousand files does
# not wait on a disk; the platform's temporary folder where there is none.
_MEMORY = "/dev/shm"
# What every build imports: a worker has them before its first chunk.
_WARM_MODULES = ("datamodel_code_generator", "toolgen.codegen.render", "toolgen.output.sdk_check")


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
    # One definition a line: json.dumps with `indent` runs its encoder in Python, some ten times slower than without.
    lines = ",\n".join(json.dumps(raw, ensure_ascii=False) for raw in defs)
    (root / "tools.json").write_text('{"tools": [\n' + lines + "\n]}\n", encoding="utf-8")


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
    """The names in the built package's TOOLS, imported as a user would; its models stay unloaded (see the module
    docstring: the build's staged check loaded and ran them)."""
    sys.path.insert(0, str(root / "generated"))
    try:
        importlib.invalidate_caches()  # the folder's listing changed since the chunk before was imported
        return set(importlib.import_module(package).TOOLS)
    finally:
        sys.path.remove(str(root / "generated"))
        # The chunk's package is never imported again: kept, its modules would make every later garbage
        # collection of this worker slower.
        for loaded in [name for name in sys.modules if name == package or name.startswith(package + ".")]:
            del sys.modules[loaded]


def _warm_worker() -> None:
    """Import what every build uses, then keep those objects out of the garbage collector's scans: otherwise each
    full collection of a build walks every module of toolgen, datamodel-code-generator, pydantic and Jinja again."""
    for module in _WARM_MODULES:
        importlib.import_module(module)
    sys.dont_write_bytecode = True  # each chunk's package is imported once, from a folder of its own
    gc.collect()
    gc.freeze()


Job = tuple[int, list[dict[str, Any]], bool, bool]


def build_chunk(job: Job, scratch: Path | None = None) -> list[Outcome]:
    """Build the chunk; when some definitions are rejected, build again without them and import the result.

    `scratch` is the folder this worker's project lives in across its chunks (a temporary one without it).
    """
    number, defs, normalize, render = job
    if scratch is None:
        with tempfile.TemporaryDirectory(prefix="tooldefs-", dir=_memory_folder()) as temporary:
            return build_chunk(job, Path(temporary))
    root = scratch / f"worker-{os.getpid()}"
    root.mkdir(exist_ok=True)
    outcomes: dict[int, Outcome] = {}
    package = f"corpus_chunk_{number}"
    _write_project(root, package, defs, normalize)
    try:
        if render:
            toolgen.build(root)
        else:
            lower(load_config(root))
    except InvalidInputError as error:
        outcomes = _rejects(error, number)
        while render:
            # The build lints the tools once the front end takes them: a second round may reject more.
            kept = [i for i in range(len(defs)) if i not in outcomes]
            _write_project(root, package, (defs[i] for i in kept), normalize)
            try:
                toolgen.build(root)
                break
            except InvalidInputError as again:
                more = _rejects(again, number)
                if not more:
                    raise
                outcomes.update({kept[j]: replace(o, key=kept[j]) for j, o in more.items()})
    if not render:
        return [outcomes.get(i, Outcome(i, True)) for i in range(len(defs))]
    names = _import_names(root, package)
    for i in (i for i in range(len(defs)) if i not in outcomes):
        name = defs[i].get("name") or defs[i].get("api_name") or (defs[i].get("function") or {}).get("name")
        outcomes[i] = Outcome(i, name in names, "" if name in names else "missing-after-build")
    return [outcomes[i] for i in range(len(defs))]


def _clean_start() -> multiprocessing.context.BaseContext:
    """Workers started from a fresh interpreter, not forked from the caller: a forked worker runs on the caller's
    Python stack, and at pytest's depth the build's hottest calls cross a 16 KiB chunk of CPython 3.11's frame
    stack back and forth, each crossing a mmap and a munmap (200,000 a run, a third more CPU than from a shallow
    stack). The fork server imports what every build uses once, for all the workers it forks."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["tooldefs_build", *_WARM_MODULES])
    return context


def _memory_folder() -> str | None:
    return _MEMORY if os.path.isdir(_MEMORY) and os.access(_MEMORY, os.W_OK | os.X_OK) else None


def _cost(job: Job) -> int:
    """About how long a job takes, to start the longest first: a build costs some ten times its front end alone."""
    _, defs, _, render = job
    return len(json.dumps(defs)) * (10 if render else 1)


def classify(defs: Sequence[dict[str, Any]], normalize: bool, *, render: bool = True, workers: int = WORKERS) -> Report:
    """Every definition's outcome; with render=False only the front end runs (what would be rejected)."""
    return classify_runs(defs, [(normalize, render)], workers=workers)[0]


def classify_runs(
    defs: Sequence[dict[str, Any]], runs: Sequence[tuple[bool, bool]], *, workers: int = WORKERS
) -> list[Report]:
    """One Report per (normalize, render) run over `defs` (see `classify`), the jobs of every run in one pool."""
    defs = _numbered_duplicates(defs)
    chunks = _chunks(defs)
    jobs = [
        (run, indexes, (n, [defs[i] for i in indexes], normalize, render))
        for run, (normalize, render) in enumerate(runs)
        for n, indexes in enumerate(chunks)
    ]
    jobs.sort(key=lambda entry: _cost(entry[2]), reverse=True)
    reports = [Report() for _ in runs]
    with (
        tempfile.TemporaryDirectory(prefix="tooldefs-", dir=_memory_folder()) as scratch,
        ProcessPoolExecutor(max_workers=workers, mp_context=_clean_start(), initializer=_warm_worker) as pool,
    ):
        futures = [(run, indexes, pool.submit(build_chunk, job, Path(scratch))) for run, indexes, job in jobs]
        for run, indexes, future in futures:
            outcomes = future.result()
            reports[run].outcomes.extend(Outcome(indexes[o.key], o.built, o.rule, o.message) for o in outcomes)
    for report in reports:
        report.outcomes.sort(key=lambda o: o.key)
    return reports


def distinct_definitions(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """(source key, definition) for every distinct definition across the corpus."""
    from support.tooldefs_corpus import canonical_json, iter_corpus_tools

    unique: dict[str, tuple[str, dict[str, Any]]] = {}
    for tool in iter_corpus_tools(root):
        unique.setdefault(canonical_json(tool.raw), (tool.source.split("/")[0], tool.raw))
    return list(unique.values())


def markdown_report(root: Path) -> str:
    """The corpus table of docs/reference/corpus.md: per source, built as written and after `normalize: [types, shapes]`."""
    entries = distinct_definitions(root)
    defs = [raw for _, raw in entries]
    plain, normalized = classify_runs(defs, [(False, False), (True, True)])
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
    print(markdown_report(REPO_ROOT.parent / "shared" / "tooldefs"))
