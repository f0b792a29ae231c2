"""`toolgen validate --summary`: per tool, its calls, the invalid ones by rule and the results missing, as a table or
JSON, so a month of recorded traffic reads as one report.

A summary is counted where the records are checked (one per block, on a worker) and merged in file order, so it is
the same whatever the number of workers. Results are looked for in the same record: a conversation (`--as
messages`) or a provider request holds the calls and the tool messages answering them; other kinds do not, and
their results-missing column says `-`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.payloads.validation.fast import tool_calls
from toolgen.payloads.validation.local import Tally
from toolgen.payloads.wire_places import BodyPlaces
from toolgen.runtime import JSONTextError, parse_json

# Distinct tool names the SDK does not know kept apart; past this many, the rest share one row, so a model that
# invents a new name on every call cannot grow the report without bound.
MAX_UNKNOWN_TOOLS = 20
OTHER_UNKNOWN = "(other unknown tools)"
# Longest tool name shown; a longer invented one is cut.
MAX_NAME = 80
_UNPARSED = frozenset({"json-invalid", "json-refused"})


def holds_results(kind: str) -> bool:
    """True when a record of `kind` holds the tool messages answering its calls."""
    return kind == "messages" or kind.endswith(".request")


@dataclass
class ToolStats:
    """One tool's calls: how many, how many had an error, the rules they broke (each once a call), results missing."""

    known: bool
    calls: int = 0
    invalid: int = 0
    by_rule: dict[str, int] = field(default_factory=dict)
    results_missing: int = 0

    def merge(self, other: ToolStats) -> None:
        self.calls += other.calls
        self.invalid += other.invalid
        self.results_missing += other.results_missing
        for rule, count in other.by_rule.items():
            self.by_rule[rule] = self.by_rule.get(rule, 0) + count


@dataclass
class Summary:
    """Counts of a run, per tool and per rule; add records or findings, merge another summary in."""

    tools: dict[str, ToolStats] = field(default_factory=dict)
    rules: dict[str, int] = field(default_factory=dict)

    def expect(self, tools: Iterable[str]) -> None:
        """Rows for the SDK's tools, so a tool never called shows with 0 calls."""
        for name in tools:
            self.tools.setdefault(name, ToolStats(True))

    def add_finding(self, finding: Diagnostic) -> None:
        self.rules[finding.rule] = self.rules.get(finding.rule, 0) + 1

    def merge(self, other: Summary) -> None:
        """Another summary's tools added in (its findings are counted by add_finding as they are emitted)."""
        for name, stats in other.tools.items():
            self._stats(name, stats.known, capped=True).merge(stats)

    def add_record(
        self,
        sdk: ModuleType,
        kind: str,
        text: str,
        problems: Iterable[Diagnostic],
        canonical_of: Mapping[Diagnostic, str] | None = None,
    ) -> None:
        """The tool calls of one record, each with the findings placed inside it. `canonical_of` gives the
        canonical place of findings whose pointer is elsewhere (a recorded stream's, into its events)."""
        problems = list(problems)
        if any(p.rule in _UNPARSED for p in problems):
            return  # not JSON: there is no call to count
        canonical = _canonical(sdk, kind, text, placed=bool(problems) and canonical_of is None)
        if canonical is None:
            return
        canonical_kind, data, body_calls = canonical
        answered = _answered(data) if canonical_kind == "messages" else None
        if canonical_of is not None:
            places = [(canonical_of.get(p, "\0"), p) for p in problems]
        else:
            places = [(_canonical_pointer(kind, p, body_calls), p) for p in problems]
        for pointer, call in tool_calls(canonical_kind, data):
            function = call.get("function") if isinstance(call, dict) else None
            name = function.get("name") if isinstance(function, dict) else None
            shown = name[:MAX_NAME] if isinstance(name, str) else "(no name)"
            stats = self._stats(shown, isinstance(name, str) and name in sdk.TOOLS)
            stats.calls += 1
            inside = [p for place, p in places if place == pointer or place.startswith(pointer + "/")]
            if any(p.severity is Severity.ERROR for p in inside):
                stats.invalid += 1
            for rule in sorted({p.rule for p in inside}):
                stats.by_rule[rule] = stats.by_rule.get(rule, 0) + 1
            if answered is not None and (not isinstance(call, dict) or call.get("id") not in answered):
                stats.results_missing += 1

    def _stats(self, name: str, known: bool, capped: bool = False) -> ToolStats:
        """A tool's row; merged in (`capped`), an unknown name past MAX_UNKNOWN_TOOLS counts in the shared row.

        Only merging caps: names then arrive in the order they first appear in the files, however the files were
        cut into blocks, so the same names get rows whatever the number of workers.
        """
        stats = self.tools.get(name)
        if stats is not None:
            return stats
        if capped and not known and name != OTHER_UNKNOWN and self._unknown_names() >= MAX_UNKNOWN_TOOLS:
            return self._stats(OTHER_UNKNOWN, False)
        stats = self.tools[name] = ToolStats(known)
        return stats

    def _unknown_names(self) -> int:
        return sum(1 for name, stats in self.tools.items() if not stats.known and name != OTHER_UNKNOWN)

    def rows(self) -> list[tuple[str, ToolStats]]:
        """Known tools first, by name; then the unknown names, by name, and the row that gathers the rest."""
        return sorted(self.tools.items(), key=lambda item: (not item[1].known, item[0] == OTHER_UNKNOWN, item[0]))

    def to_json(self, kind: str, tally: Tally) -> dict[str, Any]:
        results = holds_results(kind)
        return {
            "kind": kind,
            "records": tally.records,
            "invalid": tally.invalid,
            "unreadable": tally.unreadable,
            "tools": [
                {
                    "tool": name,
                    "known": stats.known,
                    "calls": stats.calls,
                    "invalid_calls": stats.invalid,
                    "invalid_by_rule": dict(sorted(stats.by_rule.items())),
                    "results_missing": stats.results_missing if results else None,
                }
                for name, stats in self.rows()
            ],
            "findings_by_rule": dict(sorted(self.rules.items())),
        }

    def table(self, kind: str, tally: Tally) -> str:
        """The report as Markdown tables: one row a tool, then the findings by rule."""
        results = holds_results(kind)
        lines = [
            "| tool | calls | invalid calls | invalid % | invalid calls by rule | results missing |",
            "| --- | ---: | ---: | ---: | --- | ---: |",
        ]
        for name, stats in self.rows():
            shown = name if stats.known or name == OTHER_UNKNOWN else f"{name} (unknown)"
            rate = f"{100 * stats.invalid / stats.calls:.1f}%" if stats.calls else "-"
            rules = ", ".join(f"{rule} {count:,}" for rule, count in sorted(stats.by_rule.items())) or "-"
            missing = f"{stats.results_missing:,}" if results else "-"
            lines.append(f"| {_cell(shown)} | {stats.calls:,} | {stats.invalid:,} | {rate} | {rules} | {missing} |")
        lines += ["", "| rule | findings |", "| --- | ---: |"]
        lines += [f"| {rule} | {count:,} |" for rule, count in sorted(self.rules.items())] or ["| (none) | 0 |"]
        lines += [
            "",
            f"{tally.records:,} record(s) as {kind}: {tally.invalid:,} invalid, {tally.unreadable:,} unreadable",
        ]
        return "\n".join(lines)


def _cell(text: str) -> str:
    """A table cell that cannot break the table: pipes escaped, line breaks as spaces."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _canonical(
    sdk: ModuleType, kind: str, text: str, placed: bool = False
) -> tuple[str, Any, list[tuple[str, str]]] | None:
    """The record as the canonical kind whose tool calls are counted (or None when it holds none to count), and
    for a provider body with findings to attribute (`placed`), (canonical pointer, body pointer) of each call."""
    try:
        data = parse_json(text, max_chars=None)
    except (JSONTextError, RecursionError):
        return None
    if "." not in kind:
        return kind, data, []
    wire, body_kind = kind.rsplit(".", 1)
    runtime = sdk._runtime
    try:
        decoded = runtime.decode(data, wire, body_kind)
    except (ValueError, RecursionError):
        return None
    if isinstance(decoded, runtime.ProviderError):
        return None
    messages = [decoded.message] if body_kind == "response" else list(decoded.messages)
    calls: list[tuple[str, str]] = []
    if placed:
        places = BodyPlaces(data, messages, wire)
        calls = [
            (f"/{index}/tool_calls/{number}", body)
            for index, message in enumerate(messages)
            for number in range(len(message.get("tool_calls") or ()))
            if (body := places.call(index, number)) is not None
        ]
    if body_kind == "response":
        return "message", decoded.message, [(pointer[2:], body) for pointer, body in calls]
    return "messages", messages, calls


def _canonical_pointer(kind: str, finding: Diagnostic, calls: list[tuple[str, str]]) -> str:
    """Where a finding is in the canonical record: its pointer, or for a provider body, the call whose place in
    the body holds it (or the place its sentence names)."""
    if "." not in kind:
        return finding.pointer
    if finding.message.startswith("canonical "):
        place = finding.message[len("canonical ") :].split(": ", 1)[0]
        return "" if place == "/" else place
    for canonical, body in calls:
        if finding.pointer == body or finding.pointer.startswith(body + "/"):
            return canonical
    return "\0"  # a finding about the wire body itself belongs to no canonical call


def _answered(messages: Any) -> frozenset[str]:
    """The call ids the tool messages of a conversation answer."""
    return frozenset(_answer_ids(messages if isinstance(messages, list) else []))


def _answer_ids(messages: list[Any]) -> Iterator[str]:
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "tool":
            answer = message.get("tool_call_id", message.get("toolCallId"))
            if isinstance(answer, str):
                yield answer
