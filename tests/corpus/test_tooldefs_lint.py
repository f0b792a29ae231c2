"""Lint and export over the tooldefs corpus: every definition that builds gets a verdict, and export's rewrites hold."""

from __future__ import annotations

from support.projects import shared_dir
from support.tooldefs_build import distinct_definitions
from support.tooldefs_lint import TARGETS, lint_corpus


def test_every_built_definition_is_linted_and_export_rewrites_keep_their_promises() -> None:
    defs = [raw for _, raw in distinct_definitions(shared_dir("tooldefs"))]
    verdicts = lint_corpus(defs)
    assert len(verdicts) >= 0.99 * len(defs)
    for verdict in verdicts.values():
        assert set(verdict.written) == set(TARGETS)
        assert verdict.problems == (), (verdict, defs[verdict.key])
        # A definition the provider takes as written also passes after export (export never makes things worse).
        assert all(verdict.after_export[t] for t in TARGETS if not verdict.written[t])
        # Lint and export agree: lint calls an error exactly what export cannot make fit.
        assert verdict.refused is not None
        for target, refused in verdict.refused.items():
            assert verdict.after_export[target] == (not refused), (target, verdict, defs[verdict.key])
    # Export's rewrites fix most schemas strict mode and Gemini's subset reject as written (names it cannot fix).
    unfixable = {"name-pattern", "description-length"}
    for target in ("openai (strict)", "gemini (parameters subset)"):
        rejected = [v for v in verdicts.values() if v.written[target] and not unfixable & set(v.written[target])]
        fixed = [v for v in rejected if v.after_export[target]]
        assert rejected and len(fixed) >= 0.9 * len(rejected), target
