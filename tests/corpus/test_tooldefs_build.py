"""Every definition of the tooldefs corpus builds into importable models or is rejected with a clear diagnostic."""

from __future__ import annotations

import pytest
from support.projects import shared_dir
from support.tooldefs_build import Report, classify_runs, distinct_definitions

from toolgen.source.normalize import STANDARD_TYPES
from toolgen.source.schemawalk import walk

CLEAR_RULES = {"tool-dialect", "tool-shape", "schema-invalid", "pattern-unsupported", "nonstandard-type"}
# What a build's lint of the providers it targets refuses (every wire here): names and descriptions they refuse.
CLEAR_RULES |= {"name-pattern", "name-duplicate-normalized", "description-length"}


@pytest.fixture(scope="module")
def definitions() -> list[dict[str, object]]:
    return [raw for _, raw in distinct_definitions(shared_dir("tooldefs"))]


def _schema_of(raw: dict[str, object]) -> object:
    function = raw.get("function")
    source = function if isinstance(function, dict) else raw
    return source.get("parameters", source.get("inputSchema"))


def _has_nonstandard_type(schema: object) -> bool:
    for sub, _ in walk(schema):
        if isinstance(sub, dict) and "type" in sub:
            names = sub["type"] if isinstance(sub["type"], list) else [sub["type"]]
            if any(not isinstance(n, str) or n not in STANDARD_TYPES for n in names):
                return True
    return False


@pytest.mark.slow
def test_corpus_builds_or_is_rejected_clearly_and_never_accepts_a_nonstandard_type_silently(
    definitions: list[dict[str, object]],
) -> None:
    """One test, so that the corpus is built once: pytest-xdist gives each worker that runs a test of a module
    its own module-scoped fixtures. Built with normalized types, and as written through the front end alone, in
    one pool, so that the short front-end jobs fill the time the last builds would leave a core idle."""
    normalized, as_written = classify_runs(definitions, [(True, True), (False, False)])
    _check_normalized(definitions, normalized)
    _check_as_written(definitions, as_written)


def _check_normalized(definitions: list[dict[str, object]], report: Report) -> None:
    """With normalized types every definition builds or is rejected clearly."""
    assert len(report.outcomes) == len(definitions)
    for outcome in report.outcomes:
        if not outcome.built:
            assert outcome.rule in CLEAR_RULES, (outcome, definitions[outcome.key])
            assert outcome.message
    # Non-standard types are the corpus's most common problem: normalization must make those build.
    typed = [i for i, raw in enumerate(definitions) if _has_nonstandard_type(_schema_of(raw))]
    assert typed
    still_rejected = [
        i for i in typed if not report.outcomes[i].built and report.outcomes[i].rule == "nonstandard-type"
    ]
    assert still_rejected == []


def _check_as_written(definitions: list[dict[str, object]], report: Report) -> None:
    """As written, a non-standard type is never accepted silently."""
    assert len(report.outcomes) == len(definitions)
    for index, raw in enumerate(definitions):
        if _has_nonstandard_type(_schema_of(raw)):
            outcome = report.outcomes[index]
            assert not outcome.built, raw
            assert outcome.rule in {"nonstandard-type", "tool-dialect", "tool-shape"}, outcome
