"""Draft 2019-09's `$recursiveRef` in a bundle: the `$ref` it resolves to, or refused where it is written.

`$recursiveRef: "#"` names the schema resource it is written in (2019-09, 8.2.4.2), unless that resource declares
`$recursiveAnchor: true`, when the dynamic scope decides, which bundling loses (resolve.py drops the anchors); so
that one is refused, naming where to write what instead (2020-12's `$dynamicRef`, whose dynamic scope the export
follows), as is one whose draft cannot be told. In the other drafts it is an unknown keyword, which their
validators ignore. 2020-12's `$dynamicRef` is the exported schema's to resolve (ir/dynamic_refs.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolgen.core.positions import Pointer, pointer_text
from toolgen.source.schemawalk import node_at

DRAFT_2019_09 = "https://json-schema.org/draft/2019-09/schema"
# The drafts without `$recursiveRef` (before 2019-09, and 2020-12, which replaced it): there it is an unknown
# keyword, which their validators ignore.
_WITHOUT_RECURSIVE_REF = frozenset(
    {
        "http://json-schema.org/draft-03/schema",
        "http://json-schema.org/draft-04/schema",
        "http://json-schema.org/draft-06/schema",
        "http://json-schema.org/draft-07/schema",
        "https://json-schema.org/draft/2020-12/schema",
    }
)


def recursive_reference(
    data: Any,
    at: Pointer,
    ref: Any,
    target: Callable[[], tuple[Any, Pointer, Any] | str | None],
    bundled: Callable[[], str],
) -> tuple[str | None, str | None]:
    """The `$ref` the `$recursiveRef` `ref` (at `at` in the document `data`) is, and the problem to report.

    `target()` is where `#` leads from there (the bundler's target: None when unresolved, and reported; a string
    for a meta-schema kept as written), `bundled()` its `$ref` in the bundle. The `$ref` is None where the keyword
    is none (another draft) or is refused, when the problem says why.
    """
    dialect = _dialect_at(data, at)
    if dialect in _WITHOUT_RECURSIVE_REF:
        return None, None
    problem = None
    if dialect != DRAFT_2019_09:
        problem = (
            "is a keyword of draft 2019-09 only, and no $schema above it says which draft this schema is; "
            f'declare "$schema": "{DRAFT_2019_09}", or use $ref'
        )
    elif ref != "#":
        problem = "is defined only for '#' (draft 2019-09, 8.2.4.2.1); use $ref"
    if problem is None:
        found = target()
        if found is None or isinstance(found, str):
            return found, None
        if isinstance(found[2], dict) and found[2].get("$recursiveAnchor"):
            named = f"{found[0].document.display}#{pointer_text(found[1])}"
            problem = (
                f"is not supported: the schema resource it names ({named}) declares "
                "$recursiveAnchor: true, so it resolves by dynamic scope, which toolgen follows only for draft "
                "2020-12's $dynamicRef; write $ref '#' and drop $recursiveAnchor, $ref the schema you mean, or "
                "declare draft 2020-12 and write $dynamicAnchor and $dynamicRef instead"
            )
        else:
            return bundled(), None
    return None, f"$recursiveRef {ref!r} {problem}"


def with_reference(rewritten: dict[str, Any], recursive: str | None) -> None:
    """Put the `$ref` a `$recursiveRef` resolved to (if any) into the bundled schema, in place: beside a `$ref` of
    its own, both apply, so the resolved one joins as an `allOf` branch."""
    if recursive is not None and "$ref" in rewritten:
        branches = rewritten.get("allOf")
        rewritten["allOf"] = [*(branches if isinstance(branches, list) else []), {"$ref": recursive}]
    elif recursive is not None:
        rewritten["$ref"] = recursive


def _dialect_at(data: Any, at: Pointer) -> str | None:
    """The draft the nearest `$schema` on the way down to `at` names (without a trailing `#`), if any."""
    dialect = None
    current = data
    for part in ("", *at):
        if part:
            _, current = node_at(current, (part,))
        if isinstance(current, dict) and isinstance(current.get("$schema"), str):
            dialect = current["$schema"].rstrip("#")
    return dialect
