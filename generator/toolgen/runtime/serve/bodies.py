# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The service's request bodies, checked: each problem names its field as a JSON pointer."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..loop.policies import Approval, json_text

ROLES = ("system", "user", "assistant", "tool")
DECISIONS = ("approve", "deny", "edit")


class BodyError(ValueError):
    """A request body the service cannot take: `field` is the JSON pointer of the bad value."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message

    def to_json(self) -> dict[str, Any]:
        return {"error": {"field": self.field, "message": self.message}}


@dataclass(frozen=True)
class NewRun:
    """What `POST /runs` asks for."""

    messages: list[dict[str, Any]]
    conversation_id: str | None


def parse_json_body(raw: bytes) -> Any:
    try:
        return json.loads(raw or b"null")
    except ValueError as error:
        raise BodyError("", f"the body is not JSON: {error}") from None
    except RecursionError:
        raise BodyError(
            "", "the body nests arrays and objects too deeply to read"
        ) from None


def _object(body: Any) -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        raise BodyError("", "the body must be a JSON object")
    return body


def new_run(body: Any) -> NewRun:
    data = _object(body)
    unknown = sorted(set(data) - {"messages", "conversation_id"})
    if unknown:
        raise BodyError(f"/{unknown[0]}", f"unknown field {unknown[0]!r}")
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BodyError("/messages", "messages must be a non-empty list of messages")
    for index, message in enumerate(messages):
        where = f"/messages/{index}"
        if not isinstance(message, Mapping):
            raise BodyError(where, "a message must be an object")
        if message.get("role") not in ROLES:
            raise BodyError(f"{where}/role", f"role must be one of {', '.join(ROLES)}")
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise BodyError(f"{where}/content", "content must be a string or a list")
    conversation = data.get("conversation_id")
    if conversation is not None and (
        not isinstance(conversation, str) or not conversation.strip()
    ):
        raise BodyError(
            "/conversation_id", "conversation_id must be a non-empty string"
        )
    return NewRun([dict(m) for m in messages], conversation)


def approval(body: Any) -> Approval:
    data = _object(body)
    unknown = sorted(set(data) - {"decision", "reason", "arguments"})
    if unknown:
        raise BodyError(f"/{unknown[0]}", f"unknown field {unknown[0]!r}")
    decision = data.get("decision")
    if decision not in DECISIONS:
        raise BodyError("/decision", f"decision must be one of {', '.join(DECISIONS)}")
    reason = data.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise BodyError("/reason", "reason must be a string")
    if decision == "approve":
        return Approval("approve", reason)
    if decision == "deny":
        return Approval.deny(reason or "the user denied this call")
    arguments = data.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError as error:
            raise BodyError("/arguments", f"arguments is not JSON: {error}") from None
        except RecursionError:
            raise BodyError(
                "/arguments", "arguments nests arrays and objects too deeply to read"
            ) from None
    if not isinstance(arguments, Mapping):
        raise BodyError("/arguments", "an edit needs arguments: a JSON object")
    return Approval("edit", reason, json_text(dict(arguments)))
