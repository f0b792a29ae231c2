"""The lint rules table of the site held to the code (the breaking rules' is held in tests/generator/policy)."""

from __future__ import annotations

import re

from support.docs_site import DOCS

from toolgen.policy.lint import RULES as LINT_RULES


def _table(page: str, marker: str) -> dict[str, str]:
    text = (DOCS / page).read_text(encoding="utf-8")
    table = text.split(f"<!-- {marker} -->", 1)[1].split(f"<!-- /{marker} -->", 1)[0]
    return dict(re.findall(r"^\| `([a-z-]+)` \| (error|warning|note) \|", table, re.MULTILINE))


def test_the_lint_page_lists_every_lint_rule_with_its_severity() -> None:
    # A note-only rule is export's note alone: lint does not report it.
    expected = {name: "note" if rule.note_only else rule.severity.value for name, rule in LINT_RULES.items()}
    assert _table("reference/lint.md", "lint-rules") == expected
