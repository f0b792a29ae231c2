# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Run settings per wire: the portable ones mapped by one table, the wire's own sent as given, the rest refused.

`plan_settings(settings, wire, tools)` sorts a run's settings for the wire its model client speaks:

- a portable setting (settings_types.CanonicalSettings) goes where TABLE says that wire carries it: the wire's
  encoder writes the ones `Request.extras["settings"]` has always held (max_tokens, temperature, top_p, stop,
  seed, user, tool_choice, parallel_tool_calls, response_format), this module writes the others at their path;
- a setting in the wire's own vocabulary (settings_types) goes into the body as given, as a kept body field
  (`Request.extras[wire]["fields"]`); a portable name the wire uses too goes so only in the wire's own
  documented form (settings_table.OWN_FORMS: OpenAI's `tool_choice={"type": "function", ...}`, Anthropic's
  `metadata={"user_id": ...}`), and a value in neither that nor the portable form is refused, never sent raw;
- `extra_body` is merged into the body as given, on any wire;
- a portable value the wire means when its field is absent and has no word for (Cohere's and Ollama's
  `tool_choice="auto"`, settings_table.DEFAULTS) is left out of the body, neither refused nor changed; the plan's
  `left_out` says why;
- anything else is a SettingProblem naming the setting, the wire and what to do: unknown on this wire, a field
  the run fills itself, a value the wire cannot state, two settings writing one place (or places the wire
  refuses together), or a setting the current SDK no longer takes (Anthropic's temperature, top_p and top_k
  since anthropic 1.0).

A setting named by a problem sends nothing of itself: a rule found after it was written (Anthropic's thinking
budget at or above max_tokens) plans the settings again without it.

The plan is checked by encoding a probe request with the wire's own codec and reading it back, so a value the
encoder cannot carry (Cohere cannot name one tool to call) is a problem too, never a silent loss. A client with
no `wire` gets the portable settings as they are in `Request.extras["settings"]`, and every other is a problem.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .canonical import Request
from .codecs import decode, encode_request
from .settings_table import (
    EXCLUSIVE,
    EXPECTED,
    PORTABLE,
    TABLE,
    Refused,
    Spelling,
    own_form,
    portable_value,
    wire_default,
)
from .settings_types import SETTINGS_TYPES, reserved, spelled, vocabulary
from .table import BY_NAME

ON_UNSUPPORTED: tuple[str, ...] = ("error", "note")
# Anthropic requires max_tokens; its encoder writes this when the request holds no Anthropic fields of its own.
ANTHROPIC_DEFAULT_MAX_TOKENS = 4096
# A place in a body: its keys from the top.
Path = tuple[str, ...]


@dataclass(frozen=True)
class SettingProblem:
    """A setting the wire cannot carry: its name, the wire, and why (with what to do)."""

    setting: str
    wire: str | None
    reason: str

    def sentence(self) -> str:
        return f"{self.setting}: {self.reason}"


class UnsupportedSettings(ValueError):
    """Run settings the model's wire cannot carry, refused before any request; `problems` lists them."""

    def __init__(self, problems: Sequence[SettingProblem], wire: str | None) -> None:
        self.problems = tuple(problems)
        self.wire = wire
        where = f"the {wire} wire" if wire else "a model client that names no wire"
        lines = "\n".join(f"  - {problem.sentence()}" for problem in self.problems)
        super().__init__(
            f"run settings that {where} cannot carry:\n{lines}\n"
            "Remove them, or pass on_unsupported='note' to run without them "
            "(a `note` event names each one)."
        )


@dataclass(frozen=True)
class SettingsPlan:
    """What a run sends of its settings: portable ones for the encoder, the wire's own body fields, problems, and
    the settings left out as the wire's default (setting -> why)."""

    wire: str | None
    portable: Mapping[str, Any]
    fields: Mapping[str, Any]
    problems: tuple[SettingProblem, ...] = ()
    left_out: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def extras(self) -> dict[str, Any]:
        """`Request.extras` for one request (fresh dicts: a hook may change what it is given)."""
        out: dict[str, Any] = {}
        if self.portable:
            out["settings"] = dict(self.portable)
        if self.fields and self.wire is not None:
            out[self.wire] = {"fields": _copied(self.fields)}
        return out


NO_SETTINGS = SettingsPlan(None, MappingProxyType({}), MappingProxyType({}))


def _copied(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _copied(item) for key, item in value.items()}
    return value


def settings_wire(model: Any) -> str | None:
    """The table name of the wire a model client speaks (its `wire` attribute), or None."""
    name = getattr(model, "wire", None)
    if not isinstance(name, str):
        return None
    row = BY_NAME.get(name)
    return None if row is None else row.name


def checked_plan(
    settings: Mapping[str, Any] | None,
    wire: str | None,
    tools: Sequence[Mapping[str, Any]] = (),
    on_unsupported: str = "error",
) -> SettingsPlan:
    """plan_settings, raising UnsupportedSettings for its problems unless `on_unsupported` is "note"."""
    if on_unsupported not in ON_UNSUPPORTED:
        raise ValueError(
            f"on_unsupported must be 'error' or 'note', not {on_unsupported!r}"
        )
    plan = plan_settings(settings, wire, tools)
    if plan.problems and on_unsupported == "error":
        raise UnsupportedSettings(plan.problems, wire)
    return plan


def plan_settings(
    settings: Mapping[str, Any] | None,
    wire: str | None,
    tools: Sequence[Mapping[str, Any]] = (),
) -> SettingsPlan:
    """The settings sorted for `wire` (see the module docstring); problems listed, not raised."""
    if not settings:
        return NO_SETTINGS if wire is None else SettingsPlan(wire, {}, {})
    if wire is not None and wire not in SETTINGS_TYPES:
        raise ValueError(f"unknown wire {wire!r}")
    sorter = _Sorter(wire)
    for key, value in settings.items():
        sorter.add(str(key), value)
    sorter.rules()
    plan = SettingsPlan(
        wire,
        MappingProxyType(sorter.portable),
        MappingProxyType(sorter.fields),
        tuple(sorter.problems),
        MappingProxyType(sorter.left_out),
    )
    written = {*sorter.portable, *(owner for owner, _ in sorter.given.values())}
    if written & {problem.setting for problem in plan.problems}:
        return _again(settings, wire, tools, plan.problems)
    if wire is None or not (plan.portable or plan.fields):
        return plan
    lost, fatal = _probe(plan, wire, tools, sorter.given)
    if fatal:
        return SettingsPlan(wire, {}, {}, (*plan.problems, *lost), plan.left_out)
    if not lost:
        return plan
    # So that what is sent is what the probe showed arrives.
    return _again(settings, wire, tools, (*plan.problems, *lost))


def _again(
    settings: Mapping[str, Any],
    wire: str | None,
    tools: Sequence[Mapping[str, Any]],
    problems: Sequence[SettingProblem],
) -> SettingsPlan:
    """The settings planned again without those `problems` name, so that nothing of those is sent."""
    dropped = {problem.setting for problem in problems}
    keep: dict[str, Any] = {}
    for key, value in settings.items():
        if key == "extra_body" and isinstance(value, dict):
            rest = {k: v for k, v in value.items() if f"extra_body.{k}" not in dropped}
            if rest:
                keep[key] = rest
        elif key not in dropped:
            keep[key] = value
    again = plan_settings(keep, wire, tools)
    return SettingsPlan(
        wire,
        again.portable,
        again.fields,
        (*problems, *again.problems),
        again.left_out,
    )


class _Sorter:
    """Sorts one run's settings into portable ones, body fields and problems."""

    def __init__(self, wire: str | None) -> None:
        self.wire = wire
        self.vocabulary = vocabulary(wire) if wire else MappingProxyType({})
        self.reserved = reserved(wire) if wire else MappingProxyType({})
        self.portable: dict[str, Any] = {}
        self.fields: dict[str, Any] = {}
        self.problems: list[SettingProblem] = []
        self.left_out: dict[str, str] = {}
        # Body place -> (setting, value) of each leaf written as given, for the probe to find again.
        self.given: dict[Path, tuple[str, Any]] = {}
        self.exclusive = [
            (tuple(first.split(".")), tuple(second.split(".")), why)
            for first, second, why in EXCLUSIVE.get(wire or "", ())
        ]

    def problem(self, setting: str, reason: str) -> None:
        self.problems.append(SettingProblem(setting, self.wire, reason))

    def add(self, key: str, value: Any) -> None:
        name = spelled(self.wire, key) if self.wire else key
        if key == "extra_body":
            self._extra_body(value)
        elif key in TABLE:
            self._portable(key, name, value)
        elif name in self.reserved:
            self.problem(key, f"not a setting: {self.reserved[name]}")
        elif name in self.vocabulary:
            self.put(key, (self.vocabulary[name], value))
        elif self.wire is None:
            self.problem(
                key,
                "the model client names no wire (no `wire` attribute), so only the portable "
                f"settings reach it ({', '.join(PORTABLE)})",
            )
        else:
            self.problem(key, _unknown(key, self.wire))

    def _portable(self, key: str, name: str, value: Any) -> None:
        fits = portable_value(key, value)
        if self.wire is None:
            if fits:
                self.portable[key] = value
            else:
                self.problem(key, f"expected {EXPECTED[key]}, got {value!r}")
            return
        entry = TABLE[key].get(self.wire)
        default = wire_default(self.wire, key, value) if fits else None
        if default is not None:
            self.left_out[key] = (
                f"{value!r} is {self.wire}'s default, left out of the body: {default}"
            )
        elif isinstance(entry, Spelling) and fits:
            self._carry(key, entry, value, name)
        elif name in self.vocabulary and own_form(self.wire, key, value):
            self.put(key, (self.vocabulary[name], value))
        elif not fits:
            self.problem(key, f"expected {EXPECTED[key]}, got {value!r}")
        elif isinstance(entry, Refused):
            self.problem(key, f"{self.wire} cannot carry it: {entry.why}")
        else:
            self.problem(key, f"{self.wire} has no equivalent setting")

    def _carry(self, key: str, entry: Spelling, value: Any, name: str) -> None:
        if isinstance(value, str) and value in entry.refuses:
            self.problem(
                key, f"{self.wire} cannot carry {value!r}: {entry.refuses[value]}"
            )
            return
        if entry.encoder:
            self.portable[key] = (
                [value] if key == "stop" and isinstance(value, str) else value
            )
            return
        if entry.levels is not None:
            level = entry.levels.get(value)
            if level is None:
                if name in self.vocabulary and own_form(self.wire or "", key, value):
                    self.put(key, (self.vocabulary[name], value))
                    return
                carried = ", ".join(entry.levels) or "none"
                self.problem(
                    key,
                    f"{self.wire} has no level {value!r} (it takes {carried})",
                )
                return
            self.put(key, level)
            return
        if entry.shape == "cache_control":
            value = {"type": "ephemeral", **(value if isinstance(value, dict) else {})}
        self.put(key, *entry.also.items(), (entry.path, value))

    def _extra_body(self, value: Any) -> None:
        if not isinstance(value, dict):
            self.problem(
                "extra_body", f"expected {EXPECTED['extra_body']}, got {value!r}"
            )
            return
        for name, item in value.items():
            if name in self.reserved:
                self.problem(
                    f"extra_body.{name}", f"not a setting: {self.reserved[name]}"
                )
            else:
                self.put(f"extra_body.{name}", (name, item))

    def put(self, setting: str, *places: tuple[str, Any]) -> None:
        """Write each (path, value) of one setting into the body fields, or none of them: a place another
        setting wrote differently, or one the wire refuses beside another's, is a problem."""
        leaves = [
            leaf
            for path, value in places
            for leaf in _leaves(tuple(path.split(".")), value)
        ]
        reason = self._clash(setting, leaves)
        if reason is not None:
            self.problem(setting, reason)
            return
        for leaf, item in leaves:
            self.given.setdefault(leaf, (setting, item))
        for path, value in places:
            *parents, last = path.split(".")
            target = self.fields
            for part in parents:
                inner = target.get(part)
                if not isinstance(inner, dict):
                    inner = target[part] = {}
                target = inner
            if isinstance(value, dict) and isinstance(target.get(last), dict):
                target[last] = {**target[last], **value}
            else:
                target[last] = value

    def _clash(self, setting: str, leaves: Sequence[tuple[Path, Any]]) -> str | None:
        for leaf, item in leaves:
            owner = self.given.get(leaf)
            if owner is not None and owner[1] != item:
                where = ".".join(leaf)
                return f"{self.wire}'s {where} is set by {owner[0]} too; set it once"
            for first, second, why in self.exclusive:
                other = second if leaf == first else first if leaf == second else None
                owner = self.given.get(other) if other is not None else None
                if other is not None and owner is not None and owner[0] != setting:
                    place, beside = ".".join(leaf), ".".join(other)
                    return (
                        f"{self.wire}'s {place} cannot be set beside {beside}, "
                        f"set by {owner[0]}: {why}"
                    )
        return None

    def rules(self) -> None:
        """Anthropic's max_tokens, which its encoder writes only for a request without Anthropic fields of its
        own, its rule that the thinking budget stays below it, and a tool_choice of none taking nothing else."""
        if self.wire != "anthropic":
            return
        if (
            self.fields
            and "max_tokens" not in self.portable
            and "max_tokens" not in self.fields
        ):
            self.fields["max_tokens"] = ANTHROPIC_DEFAULT_MAX_TOKENS
        thinking = self.fields.get("thinking")
        budget = thinking.get("budget_tokens") if isinstance(thinking, dict) else None
        ceiling = self.portable.get("max_tokens", self.fields.get("max_tokens"))
        if type(budget) is int and type(ceiling) is int and budget >= ceiling:
            owner = self.given.get(("thinking", "budget_tokens"), ("thinking", None))[0]
            self.problem(
                owner,
                f"anthropic's thinking budget ({budget}) must be below max_tokens "
                f"({ceiling}): raise max_tokens",
            )
        choice = self.portable.get("tool_choice", self.fields.get("tool_choice"))
        kind = choice.get("type") if isinstance(choice, dict) else choice
        if kind == "none" and "parallel_tool_calls" in self.portable:
            self.problem(
                "parallel_tool_calls",
                "anthropic's tool_choice {'type': 'none'} has no disable_parallel_tool_use (no tool "
                "is called); leave parallel_tool_calls out",
            )


def _leaves(path: Path, value: Any) -> Iterator[tuple[Path, Any]]:
    """The place of every leaf of `value` written at `path` (an empty object is a leaf)."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from _leaves((*path, str(key)), item)
    else:
        yield path, value


def _unknown(key: str, wire: str) -> str:
    others = [
        other
        for other in SETTINGS_TYPES
        if other != wire and spelled(other, key) in vocabulary(other)
    ]
    hint = _portable_hint(key)
    sentence = f"{wire} has no such setting"
    if others:
        sentence += f" (it is a setting of {', '.join(others)})"
    if hint is not None:
        sentence += f"; the portable setting is {hint!r}"
    return sentence


def _portable_hint(key: str) -> str | None:
    """The portable setting a wire spells `key` (Anthropic's `stop_sequences` is `stop`), if any."""
    for setting, row in TABLE.items():
        for entry in row.values():
            if isinstance(entry, Spelling) and key in (
                entry.path,
                entry.path.rsplit(".", 1)[-1],
            ):
                return setting
    return None


def _probe(
    plan: SettingsPlan,
    wire: str,
    tools: Sequence[Mapping[str, Any]],
    given: Mapping[Path, tuple[str, Any]],
) -> tuple[list[SettingProblem], bool]:
    """Encode a probe request with the wire's codec and read it back: what did not arrive is a problem.

    Also whether the probe could not be written at all (then nothing of the settings is sent)."""
    request = Request(
        [{"role": "user", "content": "?"}],
        [dict(tool) for tool in tools],
        "model",
        plan.extras(),
    )
    try:
        body = encode_request(request, wire)
        again = decode(body, wire, "request")
    except (ValueError, TypeError) as error:
        names = sorted({*plan.portable, *(setting for setting, _ in given.values())})
        reason = f"the request cannot be written with these settings: {error}"
        return [SettingProblem(name, wire, reason) for name in names], True
    problems: list[SettingProblem] = []
    got = again.extras.get("settings") if isinstance(again, Request) else None
    got = got if isinstance(got, dict) else {}
    for key, value in plan.portable.items():
        if key not in got:
            needs = (
                " (it needs tools to choose from)"
                if key == "tool_choice" and not tools
                else ""
            )
            problems.append(
                SettingProblem(key, wire, f"{wire} cannot carry {value!r}{needs}")
            )
        elif not _within(value, got[key]):
            problems.append(
                SettingProblem(
                    key,
                    wire,
                    f"{wire} cannot state {value!r}; it would send {got[key]!r}",
                )
            )
    for path, (setting, value) in given.items():
        found = _at(body, path)
        if found != value:
            shown = "nothing" if found is _MISSING else repr(found)
            problems.append(
                SettingProblem(
                    setting,
                    wire,
                    f"{wire}'s {'.'.join(path)} would be {shown}, written by another setting; "
                    "set it once",
                )
            )
    return problems, False


def _within(wanted: Any, got: Any) -> bool:
    """`got` says all `wanted` says (a wire may add a default, as a schema's name)."""
    if isinstance(wanted, dict) and isinstance(got, dict):
        return all(
            key in got and _within(value, got[key]) for key, value in wanted.items()
        )
    return bool(wanted == got)


_MISSING = object()


def _at(body: Mapping[str, Any], path: Path) -> Any:
    value: Any = body
    for part in path:
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value
