# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""When HTTPModel tries a call again: the statuses worth a retry, a server's Retry-After, backoff with jitter.

Every retry is said, never done in silence: each failed attempt made again is a `Retried` note (a stream's
StreamError carries it as `raw`, a whole answer lists them in `extras["retries"]`), which the run turns into an
`error` event with `retry` set and counts in `metrics.model_retries`. A call that fails for good after retries,
or that was not retried for want of time or because the server asked to wait too long, raises `RetriedError`:
the provider's error, its `message` untouched, saying in `str()` how many attempts were made and why no other.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from ..streams.events import StreamError
from ..wires.canonical import ProviderError, Response

# 408 request timeout, 409 lock conflict, 429 rate limit, 5xx server trouble (Anthropic's 529 overloaded too).
RETRY_STATUSES = frozenset({408, 409, 429})


def retryable(status: int) -> bool:
    return status in RETRY_STATUSES or status >= 500


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asked to wait: `retry-after-ms`, or `retry-after` as seconds or an HTTP date."""
    lowered = {key.lower(): value for key, value in headers.items()}
    for key, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = lowered.get(key)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            pass
        parsed = email.utils.parsedate_tz(value) if key == "retry-after" else None
        if parsed is not None:
            # An HTTP date is always GMT; a date without a zone is read as GMT too, never as local time.
            when = email.utils.mktime_tz((*parsed[:9], parsed[9] or 0))
            return max(0.0, when - (time.time() if now is None else now))
    return None


@dataclass(frozen=True)
class RetryPolicy:
    """Retries on 408/409/429/5xx, timeouts and dropped connections, with exponential backoff and jitter.

    A server's Retry-After is honoured; one asking for more than `max_wait` seconds ends the retries.
    """

    max_retries: int = 2
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_wait: float = 60.0

    def delay(
        self, attempt: int, headers: Mapping[str, str] | None = None
    ) -> float | None:
        """Seconds to wait before retry number `attempt + 1`, or None when there is to be no retry."""
        return self.decide(attempt, headers)[0]

    def decide(
        self, attempt: int, headers: Mapping[str, str] | None = None
    ) -> tuple[float | None, str | None]:
        """Seconds to wait before retry number `attempt + 1`; or None, and why there is to be no retry."""
        if attempt >= self.max_retries:
            return (
                None,
                f"no retries left, RetryPolicy.max_retries being {self.max_retries}",
            )
        asked = retry_after(headers) if headers else None
        if asked is not None:
            if asked <= self.max_wait:
                return asked, None
            return None, (
                f"the server asked to wait {asked:.3g} s in Retry-After, more than"
                f" RetryPolicy.max_wait, {self.max_wait:g} s"
            )
        # Jitter spreads clients that failed together so that they do not all come back at once.
        wait = min(self.max_backoff, self.backoff * 2.0**attempt)
        return wait * (0.5 + random.random() / 2), None


@dataclass(frozen=True)
class Attempt:
    """One try: the response, or the failure and the headers that may say when to try again."""

    response: Any
    failure: ProviderError | None = None
    headers: Mapping[str, str] | None = None
    # The error response and its body, for the recording when this failure is the last.
    answered: Any = None
    body: bytes | bytearray = b""
    # The request built for a try that no response answered (refused, timed out before the headers): recorded.
    sent: Any = None


@dataclass(frozen=True)
class Opened:
    """The response a call's attempts ended with, a success status."""

    response: Any


def discard(outcome: Attempt) -> None:
    """An attempt that came back after its call's deadline: its response is closed, never read."""
    if outcome.response is not None:
        outcome.response.close()


def next_wait(
    policy: RetryPolicy, attempt: int, outcome: Attempt, deadline: float, timeout: float
) -> tuple[float | None, str | None]:
    """Seconds before retry number `attempt + 1` after a failed attempt, the call's `timeout` ending at `deadline`
    (time.monotonic()); or None, and why there is none (None: a failure never retried, a 400 or a 401)."""
    failure = outcome.failure
    if failure is None or not (
        failure.type in ("timeout", "connection_error")
        or (failure.status is not None and retryable(failure.status))
    ):
        return None, None
    wait, why = policy.decide(attempt, outcome.headers)
    if wait is None:
        return None, why
    left = deadline - time.monotonic()
    if wait >= left:
        return None, (
            f"waiting {wait:.3g} s would pass the call's {timeout:g} s timeout,"
            f" {max(left, 0.0):.3g} s away"
        )
    return wait, None


@dataclass(frozen=True)
class Retried:
    """One attempt of a model call that failed and was made again: its failure, and the seconds waited."""

    attempt: int  # the attempt that failed, counting from 1
    wait: float
    message: str
    type: str | None = None
    code: str | None = None
    status: int | None = None

    @classmethod
    def of(cls, failure: ProviderError, attempt: int, wait: float) -> Retried:
        return cls(
            attempt, wait, failure.message, failure.type, failure.code, failure.status
        )

    def describe(self) -> str:
        """What failed and what comes of it, in one line (the run's `error` event says this)."""
        status = "" if self.status is None else f" (HTTP {self.status})"
        return (
            f"{self.message}{status}: attempt {self.attempt} failed,"
            f" trying again in {self.wait:.3g} s"
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def retry_event(note: Retried) -> StreamError:
    """A retry made before a stream began, as the stream's event: the run reads the note in `raw`."""
    return StreamError(
        note.describe(), note.code, note.type, note.status, note, provider=True
    )


class RetriedError(ProviderError):
    """The failure a model call ended with after retries (`retries`, one note each), or without the retry it would
    have had (`gave_up` says why: no retries left, a Retry-After past max_wait, no time left before the call's
    timeout). `message` stays the provider's; str() adds how many attempts were made and why no other."""

    def __init__(
        self,
        failure: ProviderError,
        retries: Iterable[Retried] = (),
        gave_up: str | None = None,
    ) -> None:
        super().__init__(
            failure.wire,
            failure.message,
            type=failure.type,
            code=failure.code,
            status=failure.status,
            raw=failure.raw,
        )
        self.retries = tuple(retries)
        self.attempts = len(self.retries) + 1
        self.gave_up = gave_up

    def why(self) -> str:
        """How many attempts were made, and why no other."""
        if self.attempts == 1:
            return f"not retried: {self.gave_up}"
        counted = f"after {self.attempts} attempts"
        return counted if self.gave_up is None else f"{counted}: {self.gave_up}"

    def __str__(self) -> str:
        return f"{self.message} ({self.why()})"


def error_text(error: ProviderError) -> str:
    """What an error says to a person: a RetriedError's message with how many attempts were made, else its own."""
    return str(error) if isinstance(error, RetriedError) else error.message


def final_failure(
    failure: ProviderError, retries: list[Retried], gave_up: str | None = None
) -> ProviderError:
    """The failure a call ends with: itself when nothing was retried nor given up on, else a RetriedError."""
    if not retries and gave_up is None:
        return failure
    return RetriedError(failure, retries, gave_up)


def with_retries(answer: Response, retries: list[Retried]) -> Response:
    """A whole answer that came after retries, listing them in extras["retries"]."""
    if not retries:
        return answer
    extras = {**answer.extras, "retries": [note.to_json() for note in retries]}
    return replace(answer, extras=extras)


def notes_of(entries: Any) -> list[Retried]:
    """The retry notes in a list of their JSON forms (a Response's extras, a recording's `retries`); an entry that
    is no note of this client's is no retry to count."""
    notes: list[Retried] = []
    for entry in entries if isinstance(entries, list) else ():
        try:
            notes.append(Retried(**entry))
        except TypeError:
            continue
    return notes


def retries_of(answer: Response | ProviderError | None) -> list[Retried]:
    """The retries a model call's answer or error says were made before it."""
    if isinstance(answer, RetriedError):
        return list(answer.retries)
    if not isinstance(answer, Response):
        return []
    return notes_of(answer.extras.get("retries"))
