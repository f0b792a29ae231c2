# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""A scripted model that follows the prompt: it calls the tools the prompt names or describes (with arguments it can
read from the prompt, or example arguments valid for the schema) and then reports what they returned."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..clients.base import ModelClientBase
from ..clients.scripted import ScriptedModel, assistant_turn, tool_call
from ..schema.examples import example_value
from ..wires.canonical import Request, Response, parts_of

_PLACE = re.compile(
    r"\b(?:in|for|at)\s+([A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*)*(?:(?:,\s*|\s+and\s+)[A-Z][\w.'-]*)*)"
)
_ORDER_ID = re.compile(r"\b[A-Z0-9][A-Z0-9-]{5,31}\b")
# Words that say nothing about which tool a prompt wants.
_STOP_WORDS = frozenset(
    [
        "about",
        "all",
        "an",
        "and",
        "any",
        "are",
        "at",
        "be",
        "by",
        "can",
        "could",
        "do",
        "does",
        "for",
        "from",
        "get",
        "give",
        "has",
        "have",
        "how",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "please",
        "show",
        "some",
        "tell",
        "that",
        "the",
        "this",
        "to",
        "use",
        "using",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            texts = [
                p.get("text", "")
                for p in parts_of(message.get("content"))
                if p.get("type") == "text"
            ]
            return " ".join(str(t) for t in texts)
    return ""


def _places(prompt: str) -> list[str]:
    found = _PLACE.search(prompt)
    if not found:
        return ["Paris"]
    return [p.strip() for p in re.split(r",|\band\b", found.group(1)) if p.strip()] or [
        "Paris"
    ]


def _words(text: str) -> set[str]:
    """The words of a prompt or a tool's name, title or description, lowercased, plurals made singular."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)
    found = set()
    for word in re.findall(r"[a-z0-9]+", spaced.lower()):
        if len(word) < 2 or word in _STOP_WORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        found.add(word)
    return found


def _named_tools(prompt: str, tools: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The tools the prompt asks for: those it names outright, else the one whose name, title and description
    share the most words with it (a name's words count most), else the first tool."""
    lowered = prompt.lower()
    named = [name for name in sorted(tools) if name.lower() in lowered]
    if named or not tools:
        return named
    asked = _words(prompt)

    def score(name: str) -> int:
        tool = tools[name]
        return (
            3 * len(asked & _words(name))
            + 2 * len(asked & _words(str(tool.get("title") or "")))
            + len(asked & _words(str(tool.get("description") or "")))
        )

    best = max(sorted(tools), key=score)
    return [best]


def _prompted_calls(
    prompt: str, tools: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The calls a helpful model would make for this prompt, among the tools offered."""
    calls: list[dict[str, Any]] = []
    if "get_current_weather" in tools and re.search(
        r"weather|temperature|forecast", prompt, re.IGNORECASE
    ):
        calls += [
            tool_call("get_current_weather", {"location": place})
            for place in _places(prompt)
        ]
    if "show_order_status" in tools and re.search(r"\border", prompt, re.IGNORECASE):
        found = _ORDER_ID.search(prompt)
        calls.append(
            tool_call(
                "show_order_status",
                {"order_id": found.group(0) if found else "ORD-12345"},
            )
        )
    if "todo_write" in tools and re.search(r"\bto-?do|\btask", prompt, re.IGNORECASE):
        todo = {"id": "1", "content": prompt or "try the demo", "status": "pending"}
        calls.append(tool_call("todo_write", {"todos": [todo]}))
    if "run_command" in tools and re.search(
        r"\b(ls|files|command|directory|workspace)\b", prompt, re.IGNORECASE
    ):
        calls.append(tool_call("run_command", {"program": "ls", "args": ["-l"]}))
    if not calls:
        calls += [
            tool_call(name, example_value(tools[name].get("inputSchema") or {}))
            for name in _named_tools(prompt, tools)
        ]
    return calls


def _plan(request: Request) -> dict[str, Any]:
    tools = {str(t.get("name")): t for t in request.tools}
    calls = _prompted_calls(_last_user_text(request.messages), tools)
    if not calls:
        return assistant_turn(
            "This project defines no tools, so the offline demo model has nothing to call."
        )
    return assistant_turn(None, *calls)


def _describe(content: Any) -> str:
    text = (
        content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    )
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    if isinstance(value, dict):
        return ", ".join(f"{key}: {item}" for key, item in value.items())
    return text


def _report(request: Request) -> str:
    """The answer after the tools ran: what each returned or why it failed."""
    results = []
    for message in reversed(request.messages):
        if message.get("role") != "tool":
            break
        name = message.get("name") or "tool"
        verb = "failed" if message.get("is_error") else "returned"
        results.append(f"- {name} {verb}: {_describe(message.get('content'))}")
    lines = "\n".join(reversed(results))
    return f"Offline demo (a scripted model, no LLM was called). The tools answered:\n{lines}"


def prompted_model() -> ScriptedModel:
    """The offline model: calls the tools the prompt asks about, then reports what they returned."""
    return ScriptedModel([_plan, _report])


def _turn(request: Request) -> ScriptedModel:
    # What the conversation asks for next, not how many calls came before: a run resumed by another process
    # (a durable run after a restart) gets the answer it would have got in one go.
    last = request.messages[-1].get("role") if request.messages else None
    turn = _report if last == "tool" else _plan
    # Turns before this one stand in for the model's earlier answers, so call ids stay unique in the run.
    earlier = sum(1 for m in request.messages if m.get("role") == "assistant")
    model = ScriptedModel([turn] * (earlier + 1))
    model.requests.extend([request] * earlier)
    return model


class PromptedModel(ModelClientBase):
    """The offline model of prompted_model(), answering each request from the conversation alone."""

    def complete(self, request: Request) -> Response:
        return _turn(request).complete(request)


# ---- the command line ----
