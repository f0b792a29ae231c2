"""Recorded streams replayed with one to three damages never pass other calls as `complete`.

Every recorded stream in ../shared/payloads is replayed, one framing unit a read (so the known-shapes shortcuts
take what they would from a server), with one kind of damage: a call's index reused by a second call under a new
id (`reuse`), one event sent twice (`duplicate`), two adjacent events swapped (`swap`), one event dropped
(`drop`), or an event emptied of all but its kind (`empty`: the final one, such as a Responses
`response.completed` without its `output`, half the time). Then either every call arrives with exactly
the name and arguments sent (the reused one too), or `MessageEnd.status` is not `complete`, or the table in docs/payloads.md
"What tells a repeated event" names the wire as giving no evidence for that damage. That table names damage to
deltas only (the events that carry a piece of text or arguments); damage to any other event (a start, a stop, a
call's header, an end) is `<mutation>-other` here, which the table never names, so it must always be told. Up to
three damages the wire can tell are also drawn together. The damaged streams also go through the generic path
(every read through `Aggregator.feed`, which never asks a shortcut): same events.
"""

from __future__ import annotations

import functools
import re
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.projects import REPO_ROOT
from test_stream_repeats_reuse import (
    FILES,
    NAMES,
    Reused,
    Unit,
    _index_of,
    _parsed,
    calls_of,
    emptied,
    end_of,
    expected_after,
    ids_of,
    reference,
    reuse,
    run,
    units,
    wire_of,
)

from toolgen.runtime.streams.events import Event

pytestmark = pytest.mark.skipif(not FILES, reason="../shared/payloads is absent: no recorded streams to replay")


MUTATIONS = ("reuse", "duplicate", "swap", "drop", "empty")


# ---- the table in docs/payloads.md ----


@functools.cache
def no_evidence() -> dict[str, frozenset[str]]:
    """docs/payloads.md rows: each wire (an `openai-chat` row says with or without `obfuscation`) -> the damage it cannot
    tell, as the mutation names in the row's last column."""
    text = (REPO_ROOT / "docs" / "payloads.md").read_text(encoding="utf-8")
    section = text.split("### What tells a repeated event", 1)[1].split("\n#", 1)[0]
    table: dict[str, frozenset[str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        damage = frozenset(re.findall(r"`(\w+)`", cells[2])) & set(MUTATIONS)
        for wire in re.findall(r"`([\w-]+)`", cells[0]):
            key = wire
            if wire == "openai-chat":
                key += " without obfuscation" if "without" in cells[0] else " with obfuscation"
            if wire != "obfuscation":
                table[key] = damage
    return table


def row_of(name: str) -> str:
    wire = wire_of(name)
    if wire != "openai-chat":
        return wire
    marked = any(
        isinstance(payload, dict) and "obfuscation" in payload for payload in map(_parsed, (d for _, d in units(name)))
    )
    return "openai-chat " + ("with" if marked else "without") + " obfuscation"


def judge(name: str, done: list[str], events: list[Event], expected: Counter[tuple[str, str]], ids: set[str]) -> None:
    end = end_of(events)
    if calls_of(end) == expected and ids <= ids_of(end):
        return
    if end.status != "complete":
        return
    stated = no_evidence().get(row_of(name))
    assert stated is not None, f"the table in docs/payloads.md has no row for {row_of(name)}"
    missing = [mutation for mutation in done if mutation not in stated]
    assert not missing, (
        f"{name}: after {done} the stream is complete with calls {dict(calls_of(end))} (ids {ids_of(end)}),"
        f" sent {dict(expected)} (ids {ids}); docs/payloads.md says the wire tells {missing}"
    )


# What carries a piece of text or arguments on each wire: the events whose repeat, loss or swap a wire may give no
# evidence of. The table in docs/payloads.md names damage to these only; damage to any other event must be told.
_DELTA_KINDS = frozenset(
    {
        "content_block_delta",
        "contentBlockDelta",
        "content-delta",
        "tool-call-delta",
        "tool-plan-delta",
        "step.delta",
    }
)


def is_delta(wire: str, event: str | None, data: bytes) -> bool:
    payload = _parsed(data)
    if not isinstance(payload, dict):
        return False
    if wire == "ollama":
        return not payload.get("done")
    if wire == "gemini":
        candidates = payload.get("candidates") or []
        return bool(candidates) and all(
            candidate.get("finishReason") is None
            and not any(
                isinstance(part.get("functionCall"), dict)
                and part["functionCall"].get("willContinue")
                and part["functionCall"].get("name")
                for part in (candidate.get("content") or {}).get("parts") or ()
            )
            for candidate in candidates
        )
    if wire in ("openai-chat", "mistral"):
        choices = payload.get("choices") or []
        return bool(choices) and all(
            not choice.get("finish_reason")
            and not any(
                entry.get("id") or (entry.get("function") or {}).get("name")
                for entry in (choice.get("delta") or {}).get("tool_calls") or ()
            )
            for choice in choices
        )
    kind, _ = _index_of(wire, event, payload)
    return kind in _DELTA_KINDS or str(kind).endswith(".delta")


def mutate(name: str, stream: list[Unit], mutation: str, at: int) -> tuple[list[Unit], str, Reused | None] | None:
    """The stream with one damage at position `at` (a call number for `reuse`), and what the damage was: the
    mutation's name where it fell on deltas only, else `<mutation>-other`. None where it does not apply."""
    wire = wire_of(name)
    if mutation == "reuse":
        made = reuse(name, stream, at)
        return None if made is None else (made[0], mutation, made[1])
    if mutation == "empty":
        # The final event half the time (a Responses final response without its output), else any event.
        return emptied(stream, None if at % 2 == 0 else at // 2), mutation, None
    if not stream:
        return None
    at %= len(stream)
    if mutation in ("duplicate", "drop"):
        label = mutation if is_delta(wire, *stream[at]) else mutation + "-other"
        if mutation == "duplicate":
            return [*stream[: at + 1], stream[at], *stream[at + 1 :]], label, None
        return [*stream[:at], *stream[at + 1 :]], label, None
    if len(stream) < 2:
        return None
    at = min(at, len(stream) - 2)
    both = is_delta(wire, *stream[at]) and is_delta(wire, *stream[at + 1])
    return [*stream[:at], stream[at + 1], stream[at], *stream[at + 2 :]], mutation if both else "swap-other", None


# ---- the tests ----


SINGLE = settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@pytest.mark.parametrize("mutation", MUTATIONS)
@pytest.mark.parametrize("name", NAMES)
@SINGLE
@given(at=st.integers(0, 400))
def test_one_damage_never_passes_other_calls_as_complete(name: str, mutation: str, at: int) -> None:
    made = mutate(name, list(units(name)), mutation, at)
    if made is None:
        return
    stream, label, reused = made
    expected, ids = expected_after(name, [reused] if reused else [])
    judge(name, [label], run(name, stream), expected, ids)


SEVERAL = settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@SEVERAL
@given(
    name=st.sampled_from(NAMES or ["none"]),
    damage=st.lists(st.tuples(st.sampled_from(MUTATIONS), st.integers(0, 400)), min_size=1, max_size=3),
)
def test_several_damages_never_pass_other_calls_as_complete(name: str, damage: list[tuple[str, int]]) -> None:
    stream = list(units(name))
    done: list[str] = []
    reused: list[Reused] = []
    for mutation, at in damage:
        made = mutate(name, stream, mutation, at)
        if made is None:
            continue
        if made[1] in no_evidence().get(row_of(name), frozenset()):
            continue  # damage the wire gives no evidence of, taken as it came: it would hide the rest
        stream, label, copy = made
        done.append(label)
        if copy is not None:
            reused.append(copy)
    expected, ids = expected_after(name, reused)
    judge(name, done, run(name, stream), expected, ids)


def test_every_recorded_stream_with_calls_ends_complete_undamaged() -> None:
    """The damage tests mean something: the recorded streams themselves end complete with their calls."""
    with_calls = 0
    for name in NAMES:
        end = end_of(run(name, list(units(name))))
        calls, _ = reference(name)
        if calls:
            with_calls += 1
            assert end.status == "complete", (name, end.status)
    assert with_calls >= 15
