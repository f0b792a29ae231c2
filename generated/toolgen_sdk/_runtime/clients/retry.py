# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""When HTTPModel tries a call again: the statuses worth a retry, a server's Retry-After, backoff with jitter."""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass

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
        if attempt >= self.max_retries:
            return None
        asked = retry_after(headers) if headers else None
        if asked is not None:
            return asked if asked <= self.max_wait else None
        # Jitter spreads clients that failed together so that they do not all come back at once.
        return min(self.max_backoff, self.backoff * 2.0**attempt) * (
            0.5 + random.random() / 2
        )
