"""Check the tooldefs corpus extractor against the counts in the corpus MANIFEST."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest
from support.projects import REPO_ROOT
from support.tooldefs_corpus import CorpusTool, canonical_json, iter_corpus_tools

CORPUS_ROOT = REPO_ROOT.parent / "shared" / "tooldefs"
NAME_KEYS = ("name", "api_name")
# The MANIFEST counts a tool once per (name, description, input, output) whatever key holds the
# input; ACEBench writes a few tools as `parameters` in one file and `arguments`+`tags` in another,
# and those stay distinct raw objects.
SURPLUS = 0.01
SUMMARY_ROW = re.compile(r"^\| ([a-z0-9-]+) \|(?:[^|]*\|){5} (\d+) \|", re.MULTILINE)
FILE_ROW = re.compile(r"^\| `([^`]+)` \| `[^`]+` \| \d+ \| (\d+) \|", re.MULTILINE)


@pytest.fixture(scope="module")
def manifest() -> str:
    if not CORPUS_ROOT.is_dir():
        pytest.skip(f"../shared/tooldefs not present (looked for {CORPUS_ROOT})")
    return (CORPUS_ROOT / "MANIFEST.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def tools(manifest: str) -> list[CorpusTool]:
    # Takes `manifest` only to share its skip when the corpus is absent.
    return list(iter_corpus_tools(CORPUS_ROOT))


def test_unique_definitions_per_source(manifest: str, tools: list[CorpusTool]) -> None:
    expected = {key: int(unique) for key, unique in SUMMARY_ROW.findall(manifest)}
    occurrences: dict[str, int] = defaultdict(int)
    distinct: dict[str, set[str]] = defaultdict(set)
    for tool in tools:
        key = tool.source.split("/", 1)[0]
        occurrences[key] += 1
        distinct[key].add(canonical_json(tool.raw))

    print(f"\n{'source':<22}{'manifest':>9}{'distinct':>9}{'per-file':>9}")
    for key in sorted(expected.keys() | distinct.keys()):
        print(f"{key:<22}{expected.get(key, 0):>9}{len(distinct[key]):>9}{occurrences[key]:>9}")

    assert distinct.keys() <= expected.keys(), "sources missing from the MANIFEST summary"
    for key, want in expected.items():
        got = len(distinct[key])
        assert want <= got <= want * (1 + SURPLUS), f"{key}: {got} distinct, MANIFEST says {want}"


def test_exactly_the_files_with_definitions_yield(manifest: str, tools: list[CorpusTool]) -> None:
    with_defs = {path for path, unique in FILE_ROW.findall(manifest) if int(unique) > 0}
    assert with_defs, "no per-file rows parsed from the MANIFEST"
    assert {tool.source for tool in tools} == with_defs


def test_every_definition_is_a_named_object_once_per_file(tools: list[CorpusTool]) -> None:
    locators: set[tuple[str, str]] = set()
    raws: set[tuple[str, str]] = set()
    for tool in tools:
        where = f"{tool.source} {tool.locator}"
        assert isinstance(tool.raw, dict), where
        assert any(isinstance(tool.raw.get(k), str) and tool.raw[k] for k in NAME_KEYS), where
        assert (tool.source, tool.locator) not in locators, f"{where} yielded twice"
        assert (tool.source, canonical_json(tool.raw)) not in raws, f"{where} repeats a definition"
        locators.add((tool.source, tool.locator))
        raws.add((tool.source, canonical_json(tool.raw)))
