# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What a connection answers when the server asks: elicitation (form and URL), sampling, roots.

- toolgen's approval question for a call (serve_mcp asks "Allow NAME(ARGUMENTS)?" before a tool marked
  requiresApproval runs) is answered yes only for a call this connection is making right now: the same tool and,
  where the question carries them, the same arguments. The loop asked its own approver before that call; a
  question about any other call is the application's to answer (`on_elicit`), or declined.
- Any other elicitation goes to `on_elicit(message, request)`: `request` is the requested schema (a Mapping) for
  a form, which the callback answers with the content (None declines); the URL (a str) for URL mode, which the
  callback answers with any mapping once the user has agreed to open it (None declines). A callback that fails,
  or cannot read a URL where it expected a schema, declines. The same goes for the URLs a server names in a
  "URL elicitation required" error (-32042): each is asked, and the call is made once more when all are agreed.
- `on_sample(params)` answers a sampling request (its params as JSON data: messages, systemPrompt, maxTokens...)
  with the reply's text, or a CreateMessageResult as JSON data; None declines.
- `roots` is a list of roots (a `file://` URI, a path, or {"uri", "name"}) or a callable returning one.

Callbacks may be async or plain functions; a plain one runs on a worker thread, not on the connection's loop.
The capability for each is advertised only when the application gives it (sampling, roots).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..tools.guards import ToolFailure, is_async_handler
from .sdk import mcp_module, mcp_types
from .server import APPROVAL_KEY

# Answers an elicitation that is not toolgen's approval question for the call in flight: (message, the requested
# schema for a form or the URL for URL mode) to the content to send back (any mapping, for a URL), or None to
# decline. May be a plain function.
Elicit = Callable[[str, Any], Awaitable[Mapping[str, Any] | None]]
# Answers a sampling request: its params as JSON data to the reply's text or a CreateMessageResult as JSON data,
# or None to decline. May be a plain function.
Sample = Callable[[Mapping[str, Any]], Awaitable[str | Mapping[str, Any] | None]]
Root = str | Mapping[str, Any]
Roots = Sequence[Root] | Callable[[], Any]

_LOG = logging.getLogger(__name__)
# How many URLs one "URL elicitation required" error may ask the user to open.
_MOST_URLS = 5
# The code of a declined sampling request (the spec's example for a user who rejects one).
_DECLINED = -1


async def _answer(callback: Callable[..., Any], *arguments: Any) -> Any:
    """A callback's answer: awaited when async, else run on a worker thread (the loop keeps serving the call)."""
    if is_async_handler(callback):
        return await callback(*arguments)
    anyio = mcp_module("anyio")
    answer = await anyio.to_thread.run_sync(lambda: callback(*arguments))
    if isinstance(answer, Awaitable):
        answer = await answer
    return answer


def root_entry(root: Root) -> dict[str, Any]:
    """One root as MCP's Root (JSON data): a path becomes its `file://` URI; TypeError for what is no URI, path
    or mapping, ValueError for one MCP does not take."""
    if isinstance(root, str):
        entry: dict[str, Any] = {
            "uri": root if "://" in root else Path(root).resolve().as_uri()
        }
    elif isinstance(root, Mapping):
        entry = dict(root)
    else:
        raise TypeError(
            f"a root is a URI, a path or a {{'uri', 'name'}} mapping, not {type(root).__name__}"
        )
    try:
        checked = mcp_types().Root.model_validate(entry)
    except Exception as error:  # noqa: BLE001 - pydantic's error, said as a root's
        raise ValueError(f"{root!r} is not a root (a file:// URI): {error}") from None
    data: dict[str, Any] = checked.model_dump(
        mode="json", by_alias=True, exclude_none=True
    )
    return data


def _approval_asked(params: Any) -> str | None:
    """The tool an elicitation asks approval for, when it is toolgen's approval question (serve_mcp's): named in
    its `_meta` (a plain dict in the SDK's params, or a model), else in its words, "Allow NAME(...)?"."""
    meta = getattr(params, "meta", None)
    if meta is not None and not isinstance(meta, Mapping):
        meta = meta.model_dump() if hasattr(meta, "model_dump") else None
    asked = meta.get(APPROVAL_KEY) if isinstance(meta, Mapping) else None
    if isinstance(asked, Mapping) and isinstance(asked.get("tool"), str):
        return str(asked["tool"])
    message = getattr(params, "message", "")
    if isinstance(message, str) and message.startswith("Allow ") and "(" in message:
        return message[len("Allow ") :].partition("(")[0]
    return None


def _canonical(arguments: Any) -> str | None:
    try:
        return json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return None


class Asked:
    """A connection's answers to its server's requests, and the calls it has in flight (touched on its loop only)."""

    def __init__(
        self,
        on_elicit: Elicit | None = None,
        on_sample: Sample | None = None,
        roots: Roots | None = None,
    ) -> None:
        self.on_elicit = on_elicit
        self.on_sample = on_sample
        self.roots = roots
        if roots is not None and not callable(roots):
            self._fixed_roots: list[dict[str, Any]] | None = [
                root_entry(r) for r in roots
            ]
        else:
            self._fixed_roots = None
        self._calls: list[tuple[str, str | None]] = []

    @contextmanager
    def calling(self, name: str, arguments: Any) -> Iterator[None]:
        """While a call to `name` with `arguments` is in flight: the one approval question answered for it."""
        call = (name, _canonical(arguments if arguments is not None else {}))
        self._calls.append(call)
        try:
            yield
        finally:
            self._calls.remove(call)

    def _approves(self, params: Any, approval: frozenset[str]) -> bool:
        """Whether this is toolgen's approval question for a call in flight of a tool marked requiresApproval."""
        tool = _approval_asked(params)
        if tool is None or tool not in approval:
            return False
        asked_for = [arguments for name, arguments in self._calls if name == tool]
        if not asked_for:
            return False
        message = getattr(params, "message", "")
        message = message if isinstance(message, str) else ""
        opening = f"Allow {tool}("
        if message.startswith(opening) and message.endswith(")?"):
            try:
                arguments = json.loads(message[len(opening) : -2])
            except ValueError:
                return False
            return _canonical(arguments) in asked_for
        # A question in other words, the tool named in its _meta: the tool is all there is to match.
        return not message.startswith("Allow ")

    async def elicit(self, params: Any, approval: frozenset[str]) -> Any:
        """The ElicitResult for a server's elicitation/create."""
        types = mcp_types()
        if self._approves(params, approval):
            return types.ElicitResult(action="accept", content={})
        url = getattr(params, "url", None)
        schema = getattr(params, "requested_schema", None)
        if isinstance(url, str):
            agreed = await self._ask(params.message, url)
            return types.ElicitResult(
                action="accept" if agreed is not None else "decline"
            )
        if schema is None:
            return types.ElicitResult(action="decline")
        content = await self._ask(params.message, schema)
        if content is None:
            return types.ElicitResult(action="decline")
        try:
            return types.ElicitResult(action="accept", content=dict(content))
        except Exception:  # noqa: BLE001 - an answer MCP cannot carry is no answer
            _LOG.warning(
                "on_elicit's answer is not form content; the elicitation was declined",
                exc_info=True,
            )
            return types.ElicitResult(action="decline")

    async def _ask(self, message: Any, request: Any) -> Any:
        if self.on_elicit is None:
            return None
        try:
            answer = await _answer(self.on_elicit, str(message), request)
        except Exception:  # noqa: BLE001 - the application's callback failing declines; the call goes on
            _LOG.warning(
                "on_elicit failed; the elicitation was declined", exc_info=True
            )
            return None
        return answer if isinstance(answer, Mapping) else None

    async def prerequisites(self, error: Any, label: str) -> None:
        """Ask about each URL a "URL elicitation required" error names; ToolFailure saying which was not agreed."""
        data = getattr(error, "data", None)
        found = data.get("elicitations") if isinstance(data, Mapping) else None
        wanted = (
            [e for e in found if isinstance(e, Mapping)]
            if isinstance(found, list)
            else []
        )
        if not wanted or len(wanted) > _MOST_URLS:
            raise ToolFailure(
                f"the MCP server {label} asks the user to open {len(wanted)} URLs first, which this client"
                f" does not ask for (1 to {_MOST_URLS})"
            )
        for elicitation in wanted:
            url, message = elicitation.get("url"), elicitation.get("message", "")
            if not isinstance(url, str):
                raise ToolFailure(
                    f"the MCP server {label} asks the user to open a URL it does not give"
                )
            if await self._ask(message, url) is None:
                raise ToolFailure(
                    f"the MCP server {label} needs the user to open {url} first ({str(message)[:300]}),"
                    " and they did not agree"
                    + (
                        ""
                        if self.on_elicit
                        else " (this connection has no on_elicit to ask them)"
                    )
                )

    async def sample(self, context: Any, params: Any) -> Any:
        """The CreateMessageResult for a server's sampling/createMessage, or ErrorData declining it."""
        types = mcp_types()
        if self.on_sample is None:
            return types.ErrorData(
                code=types.INVALID_REQUEST, message="sampling is not supported"
            )
        request = params.model_dump(mode="json", by_alias=True, exclude_none=True)
        try:
            reply = await _answer(self.on_sample, request)
        except Exception:  # noqa: BLE001 - the server hears that it failed, not the application's details
            _LOG.warning(
                "on_sample failed; the sampling request was refused", exc_info=True
            )
            return types.ErrorData(
                code=types.INTERNAL_ERROR, message="the client could not sample"
            )
        if reply is None:
            return types.ErrorData(
                code=_DECLINED, message="the user declined the sampling request"
            )
        if isinstance(reply, str):
            reply = {
                "content": {"type": "text", "text": reply},
                "stopReason": "endTurn",
            }
        if not isinstance(reply, Mapping):
            return types.ErrorData(
                code=types.INTERNAL_ERROR,
                message="the client's sampler gave no message",
            )
        data = {"role": "assistant", "model": "unknown", **reply}
        kind = (
            types.CreateMessageResultWithTools
            if params.tools
            else types.CreateMessageResult
        )
        try:
            return kind.model_validate(data)
        except Exception:  # noqa: BLE001 - an answer MCP cannot carry is reported, not raised into the SDK
            _LOG.warning(
                "on_sample's answer is not a CreateMessageResult", exc_info=True
            )
            return types.ErrorData(
                code=types.INTERNAL_ERROR,
                message="the client's sampler gave no message",
            )

    async def list_roots(self, context: Any) -> Any:
        """The ListRootsResult for a server's roots/list."""
        types = mcp_types()
        roots = self._fixed_roots
        if roots is None and callable(self.roots):
            try:
                given = await _answer(self.roots)
                roots = [root_entry(r) for r in given or ()]
            except Exception:  # noqa: BLE001 - the server hears that it failed, not the application's details
                _LOG.warning("the roots callback failed", exc_info=True)
                return types.ErrorData(
                    code=types.INTERNAL_ERROR,
                    message="the client could not list its roots",
                )
        return types.ListRootsResult.model_validate({"roots": roots or []})
