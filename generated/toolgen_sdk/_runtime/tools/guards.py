# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""What dispatch needs against hostile calls: handler exits carried, ids made for calls without one, bounded text."""

from __future__ import annotations

import hashlib
import re
import types
from collections.abc import Callable, Mapping
from typing import Any

from ..models.problems import ValidationProblem


class HandlerExit(Exception):
    """SystemExit, KeyboardInterrupt and the like from a handler, carried as an Exception.

    Raised as themselves inside an event loop they stop the loop and escape asyncio.run; carried, they are
    one more failing tool. A handler's exit is its own: the run goes on and the model hears of it.
    """

    def __init__(self, original: BaseException) -> None:
        super().__init__(original)
        self.original = original


class ToolFailure(Exception):
    """Raised by a handler to tell the model exactly this sentence, as the tool's error, with no prefix added.

    A remote tool (over MCP) already words its failure for the model; wrapping it again would say it twice.
    """


def is_async_handler(handler: Callable[..., Any]) -> bool:
    """An async function, or an object whose __call__ is one (iscoroutinefunction says no of the object)."""
    import inspect

    return inspect.iscoroutinefunction(handler) or (
        callable(handler) and inspect.iscoroutinefunction(type(handler).__call__)
    )


def guarded_sync(handler: Callable[..., Any], args: Any, context: Any) -> Any:
    try:
        result = handler(args, context)
        if isinstance(result, types.CoroutineType):
            # A sync wrapper that returns an async call's coroutine means that call: run it here, on a loop
            # of its own, rather than send "<coroutine object ...>" to the model and never await it.
            import asyncio

            result = asyncio.run(result)
        return result
    except Exception:
        raise
    except BaseException as error:  # noqa: BLE001 - carried, then reported as the tool's failure
        raise HandlerExit(error) from None


async def guarded_async(handler: Callable[..., Any], args: Any, context: Any) -> Any:
    import asyncio

    try:
        return await handler(args, context)
    except (Exception, asyncio.CancelledError):
        raise
    except BaseException as error:  # noqa: BLE001 - carried, then reported as the tool's failure
        raise HandlerExit(error) from None


def call_id_of(call: Mapping[str, Any], arguments: Any) -> str:
    """The call's id as text; a call without one (or with null) gets an id made from its content.

    The same call always gets the same id, so a retried call pairs with its answer; an integer id is written
    as its digits.
    """
    given = call.get("id")
    if isinstance(given, str) and given:
        return given
    if isinstance(given, int) and not isinstance(given, bool) and abs(given) < 10**40:
        return str(given)
    function = call.get("function")
    name = function.get("name") if isinstance(function, Mapping) else None
    name = name if isinstance(name, str) else ""
    seed = f"{name:.200}\x00{arguments if isinstance(arguments, str) else ''}"
    digest = hashlib.sha256(seed.encode("utf-8", "replace")).hexdigest()[:24]
    return f"call_toolgen_{digest}"


def cut_text(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 30] + f"... ({len(text) - limit + 30} characters cut)"


def problem_text(problem: ValidationProblem) -> str:
    """One problem as the message lists it: a long pointer keeps its two ends, the sentence its start."""
    pointer = problem.pointer or "(root)"
    if len(pointer) > 160:
        pointer = f"{pointer[:80]}/.../{pointer[-60:].partition('/')[2]}"
    return f"{pointer}: {cut_text(problem.message, 400)}"


def listed_problems(
    intro: str, problems: tuple[ValidationProblem, ...], max_chars: int
) -> str:
    """`intro: ` and as many problems as fit in about `max_chars`; the rest counted."""
    budget = max_chars - len(intro) - 80
    shown: list[str] = []
    used = 0
    for problem in problems:
        text = problem_text(problem)
        if shown and used + len(text) + 2 > budget:
            break
        shown.append(text)
        used += len(text) + 2
    left = len(problems) - len(shown)
    details = "; ".join(shown)
    if left:
        details += f"; and {left} more problem{'s' if left != 1 else ''} left out"
    return f"{intro}: {details}"


def quoted_name(name: str) -> str:
    return repr(cut_text(name, 100))


# In a Python str every surrogate code point is a lone one: a pair is one code point already.
_SURROGATE = re.compile("[\ud800-\udfff]")


def sendable(text: str) -> str:
    """`text` as UTF-8 can carry it: a lone surrogate (which no request can encode) becomes U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def is_timeout(error: BaseException) -> bool:
    # Python 3.10 has three distinct timeout errors; 3.11 made them one. Imported here: only timeouts need them.
    import asyncio
    import concurrent.futures

    return isinstance(
        error, (TimeoutError, asyncio.TimeoutError, concurrent.futures.TimeoutError)
    )


def message_of(error: BaseException) -> str:
    """str(error), or a sentence saying it could not be read: a failure is reported whatever its __str__ does."""
    try:
        return str(error)
    except BaseException:  # noqa: BLE001 - an exception whose str() fails still gets reported
        return "(its message could not be read)"


def unapproved(name: str) -> str:
    """Why dispatch refused a call to a tool that requires approval: no one said yes to it."""
    return (
        f"the tool {name!r} requires approval and this call was not approved, so it did not"
        " run (ask first, then dispatch with ToolContext(approved=True))"
    )
