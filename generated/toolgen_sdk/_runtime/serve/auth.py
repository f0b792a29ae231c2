# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""Who may call the service: bearer tokens, the rights each grants, the page's sessions, the operator's own auth.

Credentials are bearer tokens, each granting some of four rights: `start` (POST /runs), `read` (GET /runs...,
their events, /stats, /info), `decide` (approvals) and `cancel`. The page trades a token for a session cookie
(POST /session): a random id kept in this process's memory with the token's rights and an expiry (12 hours),
at most 1,000 at once (the oldest goes first), lost when the process stops (the page then asks again; several
servers behind one address need the bearer header). Tokens and session ids are compared as SHA-256 digests in
constant time. A valid token is always let in, first: a flood of wrong ones from the operator's own address (all
of 127.0.0.1, or every client behind one proxy) never locks the operator out. Wrong tokens are counted per client
address: past 10 in a minute that address's wrong ones are answered 429 with Retry-After instead of 401, and
logged. That throttle cannot slow a guesser (a valid token must be let in, so any answer tells right from wrong):
what makes guessing hopeless is the token, 256 random bits when made here, at least 16 characters when given.

Each credential has a holder, the name the service counts its open runs under (a cap per holder keeps one
credential from piling up runs that wait for decisions): a tokens file line's NAME, else `token:` and the first
12 hex digits of the token's SHA-256; a session holds its token's.

An operator's own authentication replaces the tokens: any callable taking the Starlette request and returning
the rights it grants (an iterable of right names; all of them: ALL_RIGHTS), or a Credential naming its holder
too (plain rights all count under the holder `operator`), or None to refuse (401), directly or as an
awaitable. `open_access` grants everything (`serve --no-auth`, loopback only).

A credential a browser sends by itself (the session cookie; for the operator's own authentication, anything but
an Authorization header) does not let in an unsafe request (POST, DELETE) that says no Origin (403). Host and
Origin are the boundary's (boundary.py).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import re
import secrets
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

RIGHTS = ("start", "read", "decide", "cancel")
ALL_RIGHTS = frozenset(RIGHTS)
# The environment variable holding the service's token (every right).
TOKEN_ENV = "TOOLGEN_SERVE_TOKEN"
SESSION_COOKIE = "toolgen_session"
# Shorter tokens can be guessed; a generated one has 43 characters.
MIN_TOKEN_CHARS = 16
SESSION_SECONDS = 12 * 3600
MAX_SESSIONS = 1000
# Wrong tokens a client address may present within FAILURE_WINDOW seconds before its wrong ones are answered 429.
MAX_FAILURES = 10
FAILURE_WINDOW = 60.0
# Addresses whose failures are remembered at once: past it, the one failing longest ago is forgotten.
MAX_ADDRESSES = 4096
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

# The holder of credentials an operator's authentication grants as plain rights, and of `open_access`'s.
OPERATOR_HOLDER = "operator"
OPEN_HOLDER = "open"
# A holder name in a tokens file: what a log line or an error can show as it is.
_HOLDER = re.compile(r"[A-Za-z0-9_.@:-]{1,64}")

Rights: TypeAlias = frozenset[str]


@dataclass(frozen=True)
class Credential:
    """What a request proved: the rights it holds, and the holder its runs are counted under."""

    rights: Rights
    holder: str


# The operator's authentication: the request in, the rights (or a Credential) it grants out (None: refused).
Authenticate: TypeAlias = Callable[
    [Any],
    "Iterable[str] | Credential | None | Awaitable[Iterable[str] | Credential | None]",
]

_TOKEN = re.compile(r"[\x21-\x7e]+")
_LOG = logging.getLogger(__name__)


class AuthError(ValueError):
    """A credential setting the service cannot use (a tokens file, a token too short); the message says why."""


@dataclass(frozen=True)
class Refusal:
    """Why a request is not served: its HTTP status, the message, and for 429 the seconds to wait."""

    status: int
    message: str
    retry_after: int | None = None
    field: str = ""


def granted_rights(granted: Iterable[str] | str) -> Rights:
    """The known rights among `granted` (one name alone counts as one right, not as its letters)."""
    names = {granted} if isinstance(granted, str) else set(granted)
    return frozenset(names) & ALL_RIGHTS


def open_access(request: Any) -> Credential:
    """Every right to every request: `serve --no-auth`, for a service bound to a loopback address only."""
    return Credential(ALL_RIGHTS, OPEN_HOLDER)


def granted_credential(granted: Iterable[str] | Credential | str) -> Credential:
    """What an operator's authentication granted, as a Credential (plain rights: the holder `operator`)."""
    if isinstance(granted, Credential):
        return Credential(granted_rights(granted.rights), granted.holder)
    return Credential(granted_rights(granted), OPERATOR_HOLDER)


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def checked_token(token: str, where: str) -> str:
    """`token` when it can be one: printable ASCII without spaces (it travels in a header), long enough."""
    if not _TOKEN.fullmatch(token):
        raise AuthError(f"{where}: a token is printable ASCII without spaces")
    if len(token) < MIN_TOKEN_CHARS:
        raise AuthError(f"{where}: a token needs at least {MIN_TOKEN_CHARS} characters")
    return token


def token_holder(token: str) -> str:
    """The holder a token without a name counts under: not the token, nothing that helps guess it."""
    return "token:" + _digest(token).hex()[:12]


class Tokens:
    """Bearer tokens, the rights each grants and its holder, kept as digests; looked up in constant time."""

    def __init__(
        self,
        granted: Mapping[str, Iterable[str]],
        holders: Mapping[str, str] | None = None,
    ) -> None:
        named = holders or {}
        self._granted = [
            (
                _digest(token),
                Credential(
                    granted_rights(rights), named.get(token) or token_holder(token)
                ),
            )
            for token, rights in granted.items()
        ]

    @classmethod
    def single(cls, token: str, where: str = TOKEN_ENV) -> Tokens:
        """One token with every right (the environment's, or the one kept in the state folder)."""
        return cls({checked_token(token, where): ALL_RIGHTS})

    @classmethod
    def from_file(cls, path: str | Path) -> Tokens:
        """A tokens file: one `TOKEN [RIGHTS [NAME]]` a line, RIGHTS a comma list (default every right), NAME the
        holder its runs are counted under (default one made from the token); `#` comments."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise AuthError(
                f"cannot read the tokens file {str(path)!r}: {error}"
            ) from None
        return cls.from_text(text, str(path))

    @classmethod
    def from_text(cls, text: str, where: str = "tokens") -> Tokens:
        granted: dict[str, Rights] = {}
        holders: dict[str, str] = {}
        for number, line in enumerate(text.splitlines(), 1):
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            at = f"{where}:{number}"
            if len(fields) > 3:
                raise AuthError(
                    f"{at}: a line is `TOKEN RIGHTS NAME`, RIGHTS a comma list without spaces"
                )
            if len(fields) == 3:
                if not _HOLDER.fullmatch(fields[2]):
                    raise AuthError(
                        f"{at}: a NAME is 1 to 64 of A-Z a-z 0-9 _ . @ : -, not {fields[2]!r}"
                    )
                holders[fields[0]] = fields[2]
            token = checked_token(fields[0], at)
            names = fields[1].split(",") if len(fields) >= 2 else list(RIGHTS)
            if "" in names:
                raise AuthError(
                    f"{at}: a line is `TOKEN RIGHTS NAME`, RIGHTS a comma list without spaces"
                )
            unknown = [name for name in names if name not in ALL_RIGHTS]
            if unknown:
                raise AuthError(
                    f"{at}: unknown right {unknown[0]!r} (the rights: {', '.join(RIGHTS)})"
                )
            if token in granted:
                raise AuthError(f"{at}: this token is listed twice")
            granted[token] = frozenset(names)
        if not granted:
            raise AuthError(f"{where} lists no token")
        return cls(granted, holders)

    def __len__(self) -> int:
        return len(self._granted)

    def rights_of(self, token: str) -> Rights | None:
        """The rights `token` grants, or None."""
        found = self.credential_of(token)
        return None if found is None else found.rights

    def credential_of(self, token: str) -> Credential | None:
        """What `token` grants, or None; every token is compared, so the time taken tells nothing."""
        candidate = _digest(token)
        found: Credential | None = None
        for digest, credential in self._granted:
            if hmac.compare_digest(candidate, digest):
                found = credential
        return found


def kept_token(path: Path) -> tuple[str, bool]:
    """The token kept in `path` (mode 0600), made at the first call: (token, whether it was made now)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_urlsafe(32)
    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        try:
            kept = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            raise AuthError(
                f"cannot read the token in {str(path)!r}: {error}"
            ) from None
        checked_token(kept, f"{path} (delete it to have a new token made)")
        return kept, False
    try:
        if hasattr(os, "fchmod"):  # not on Windows before Python 3.13
            # The mode os.open gave is narrowed by the umask only; this makes it exactly 0600 whatever the umask.
            os.fchmod(handle, 0o600)
        os.write(handle, (token + "\n").encode("ascii"))
    finally:
        os.close(handle)
    return token, True


class Sessions:
    """Logged-in pages: random ids (kept as digests) to credentials, each for `seconds`, at most `limit` at once."""

    def __init__(
        self,
        seconds: float = SESSION_SECONDS,
        limit: int = MAX_SESSIONS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.seconds = seconds
        self._limit = limit
        self._clock = clock
        # In the order they were opened, which is also the order they expire in.
        self._live: dict[bytes, tuple[Credential, float]] = {}
        self._lock = threading.Lock()

    def open(self, granted: Rights | Credential) -> str:
        """A new session id for what a token granted (plain rights: the holder `operator`)."""
        credential = (
            granted
            if isinstance(granted, Credential)
            else Credential(granted, OPERATOR_HOLDER)
        )
        session = secrets.token_urlsafe(32)
        now = self._clock()
        with self._lock:
            self._drop_expired(now)
            while len(self._live) >= self._limit:
                del self._live[next(iter(self._live))]
            self._live[_digest(session)] = (credential, now + self.seconds)
        return session

    def rights_of(self, session: str) -> Rights | None:
        found = self.credential_of(session)
        return None if found is None else found.rights

    def credential_of(self, session: str) -> Credential | None:
        key = _digest(session)
        with self._lock:
            found = self._live.get(key)
            if found is None:
                return None
            if found[1] <= self._clock():
                del self._live[key]
                return None
            return found[0]

    def close(self, session: str) -> None:
        with self._lock:
            self._live.pop(_digest(session), None)

    def __len__(self) -> int:
        with self._lock:
            self._drop_expired(self._clock())
            return len(self._live)

    def _drop_expired(self, now: float) -> None:
        while self._live:
            oldest = next(iter(self._live))
            if self._live[oldest][1] > now:
                return
            del self._live[oldest]


class FailureLimit:
    """Wrong tokens per client address: past `limit` within `window` seconds, the address's wrong tokens are
    answered 429 (its valid ones are let in all the same: TokenAuth judges the token first)."""

    def __init__(
        self,
        limit: int = MAX_FAILURES,
        window: float = FAILURE_WINDOW,
        clock: Callable[[], float] = time.monotonic,
        addresses: int = MAX_ADDRESSES,
    ) -> None:
        self._limit, self._window, self._clock = limit, window, clock
        self._addresses = addresses
        # Each address's last `limit` failures; in the order of their last failure.
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()
        # When an address last began to be throttled was logged: a line a window at most, whatever the flood.
        self._logged = -window

    def wait(self, address: str) -> int | None:
        """Seconds until `address`'s wrong tokens are answered 401 again, or None when they are now."""
        with self._lock:
            return self._wait(address, self._clock())

    def _wait(self, address: str, now: float) -> int | None:
        failures = self._failures.get(address)
        if failures is None or len(failures) < self._limit:
            return None
        left = failures[0] + self._window - now
        return None if left <= 0 else max(1, int(left + 0.999))

    def failed(self, address: str) -> int | None:
        """Count a wrong token from `address`: None while it is within the limit (answered 401), else the seconds
        until its wrong tokens are answered 401 again (answered 429, Retry-After)."""
        now = self._clock()
        with self._lock:
            before = self._wait(address, now)
            failures = self._failures.pop(address, None)
            if failures is None:
                failures = deque(maxlen=self._limit)
            failures.append(now)
            self._failures[address] = failures
            while len(self._failures) > self._addresses:
                del self._failures[next(iter(self._failures))]
            wait = self._wait(address, now)
            log = before is None and wait is not None
            if log and now - self._logged >= self._window:
                self._logged = now
            else:
                log = False
        if log:
            _LOG.warning(
                "%d wrong tokens from %s within %g s: its next wrong ones are answered 429 (a valid token "
                "is still let in); this line is logged at most once every %g s",
                self._limit,
                address or "a client without an address",
                self._window,
                self._window,
            )
        return None if before is None else wait


def ambient_refusal(request: Any) -> Refusal | None:
    """For a request a credential the browser sends by itself (a cookie) let in: refused when it is unsafe (a
    POST, a DELETE) and says no Origin, as only an old browser's page of any site would send it."""
    method = str(request.method).upper()
    if method not in UNSAFE_METHODS or request.headers.get("origin") is not None:
        return None
    return Refusal(
        403,
        f"a {method} without Origin needs `Authorization: Bearer TOKEN`: "
        "a cookie alone is not enough",
        field="Origin",
    )


def _address(request: Any) -> str:
    client = getattr(request, "client", None)
    return str(getattr(client, "host", "") or "")


class TokenAuth:
    """The built-in authentication: `Authorization: Bearer TOKEN`, or the session cookie POST /session set.

    A request with an Authorization header is judged by that header alone (a wrong token is not rescued by a
    cookie). Also a plain Authenticate: calling it gives the rights or None.
    """

    def __init__(
        self,
        tokens: Tokens,
        *,
        cookie: str = SESSION_COOKIE,
        sessions: Sessions | None = None,
        failures: FailureLimit | None = None,
    ) -> None:
        self.tokens = tokens
        self.cookie = cookie
        self.sessions = sessions or Sessions()
        self.failures = failures or FailureLimit()

    def __call__(self, request: Any) -> Credential | None:
        verdict = self.check(request)
        return None if isinstance(verdict, Refusal) else verdict

    def check(self, request: Any) -> Credential | Refusal:
        header = request.headers.get("authorization")
        if header is not None:
            scheme, _, token = header.partition(" ")
            token = token.strip()
            if scheme.lower() != "bearer" or not token:
                return Refusal(401, "Authorization must be `Bearer TOKEN`")
            return self._token(token, _address(request))
        session = request.cookies.get(self.cookie)
        if session:
            credential = self.sessions.credential_of(session)
            if credential is None:
                return Refusal(401, "the session has ended: log in again")
            return ambient_refusal(request) or credential
        return Refusal(
            401,
            "this service needs a credential: `Authorization: Bearer TOKEN`, "
            "or the session cookie POST /session sets",
        )

    def login(self, token: str, request: Any) -> str | Refusal:
        """A new session id for a valid token (the cookie's value), or why not."""
        credential = self._token(token, _address(request))
        if isinstance(credential, Refusal):
            return credential
        return self.sessions.open(credential)

    def logout(self, request: Any) -> None:
        session = request.cookies.get(self.cookie)
        if session:
            self.sessions.close(session)

    def set_cookie(self, session: str, secure: bool) -> str:
        """The Set-Cookie header value for `session`: HttpOnly, SameSite=Strict, for the whole service."""
        return self._cookie(session, int(self.sessions.seconds), secure)

    def clear_cookie(self, secure: bool) -> str:
        return self._cookie("", 0, secure)

    def _cookie(self, value: str, seconds: int, secure: bool) -> str:
        flags = "; Secure" if secure else ""
        return f"{self.cookie}={value}; Max-Age={seconds}; Path=/; HttpOnly; SameSite=Strict{flags}"

    def _token(self, token: str, address: str) -> Credential | Refusal:
        # The token first, in constant time: a valid one is let in whatever came from its address before, so
        # that nobody sharing the address (every local process; everyone behind a proxy) can lock its holder out.
        credential = self.tokens.credential_of(token)
        if credential is not None:
            return credential
        wait = self.failures.failed(address)
        if wait is not None:
            return Refusal(
                429,
                f"too many wrong tokens from {address or 'this client'}: "
                f"wait {wait} s before trying another",
                wait,
            )
        return Refusal(401, "the token is not one this service knows")
