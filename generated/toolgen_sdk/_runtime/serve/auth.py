# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The service's trust boundary: who may call it (tokens, rights, sessions) and from where (Host, Origin).

Credentials are bearer tokens, each granting some of four rights: `start` (POST /runs), `read` (GET /runs...,
their events, /stats, /info), `decide` (approvals) and `cancel`. The page trades a token for a session cookie
(POST /session): a random id kept in this process's memory with the token's rights and an expiry (12 hours),
at most 1,000 at once (the oldest goes first), lost when the process stops (the page then asks again; several
servers behind one address need the bearer header). Tokens and session ids are compared as SHA-256 digests in
constant time. Failed tokens are counted per client address: past 10 in a minute that address gets 429.

An operator's own authentication replaces the tokens: any callable taking the Starlette request and returning
the rights it grants (an iterable of right names; all of them: ALL_RIGHTS) or None to refuse (401), directly or
as an awaitable. `open_access` grants everything (`serve --no-auth`, loopback only).

Whatever the authentication, BoundaryMiddleware refuses a request whose Host is not one of the service's own
(421: DNS rebinding), whose Origin is not one of its own pages' (403), or that a browser marks as sent by
another site (Sec-Fetch-Site) unless it is a top-level navigation. A credential a browser sends by itself (the
session cookie; for the operator's own authentication, anything but an Authorization header) does not let in
an unsafe request (POST, DELETE) that says no Origin (403).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
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
# Failed tokens a client address may present within FAILURE_WINDOW seconds before it is answered 429.
MAX_FAILURES = 10
FAILURE_WINDOW = 60.0
# Addresses whose failures are remembered at once: past it, the one failing longest ago is forgotten.
MAX_ADDRESSES = 4096
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")

Rights: TypeAlias = frozenset[str]
# The operator's authentication: the request in, the rights it grants out (None: refused).
Authenticate: TypeAlias = Callable[
    [Any], "Iterable[str] | None | Awaitable[Iterable[str] | None]"
]

_TOKEN = re.compile(r"[\x21-\x7e]+")
_HOST = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::([0-9]{1,5}))?")


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


def open_access(request: Any) -> Rights:
    """Every right to every request: `serve --no-auth`, for a service bound to a loopback address only."""
    return ALL_RIGHTS


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def checked_token(token: str, where: str) -> str:
    """`token` when it can be one: printable ASCII without spaces (it travels in a header), long enough."""
    if not _TOKEN.fullmatch(token):
        raise AuthError(f"{where}: a token is printable ASCII without spaces")
    if len(token) < MIN_TOKEN_CHARS:
        raise AuthError(f"{where}: a token needs at least {MIN_TOKEN_CHARS} characters")
    return token


class Tokens:
    """Bearer tokens and the rights each grants, kept as digests; looked up in constant time."""

    def __init__(self, granted: Mapping[str, Iterable[str]]) -> None:
        self._granted = [
            (_digest(token), granted_rights(rights))
            for token, rights in granted.items()
        ]

    @classmethod
    def single(cls, token: str, where: str = TOKEN_ENV) -> Tokens:
        """One token with every right (the environment's, or the one kept in the state folder)."""
        return cls({checked_token(token, where): ALL_RIGHTS})

    @classmethod
    def from_file(cls, path: str | Path) -> Tokens:
        """A tokens file: one `TOKEN [RIGHTS]` a line, RIGHTS a comma list (default every right); `#` comments."""
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
        for number, line in enumerate(text.splitlines(), 1):
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            at = f"{where}:{number}"
            if len(fields) > 2:
                raise AuthError(
                    f"{at}: a line is `TOKEN RIGHTS`, RIGHTS a comma list without spaces"
                )
            token = checked_token(fields[0], at)
            names = fields[1].split(",") if len(fields) == 2 else list(RIGHTS)
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
        return cls(granted)

    def __len__(self) -> int:
        return len(self._granted)

    def rights_of(self, token: str) -> Rights | None:
        """The rights `token` grants, or None; every token is compared, so the time taken tells nothing."""
        candidate = _digest(token)
        found: Rights | None = None
        for digest, rights in self._granted:
            if hmac.compare_digest(candidate, digest):
                found = rights
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
    """Logged-in pages: random ids (kept as digests) to rights, each for `seconds`, at most `limit` at once."""

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
        self._live: dict[bytes, tuple[Rights, float]] = {}
        self._lock = threading.Lock()

    def open(self, rights: Rights) -> str:
        session = secrets.token_urlsafe(32)
        now = self._clock()
        with self._lock:
            self._drop_expired(now)
            while len(self._live) >= self._limit:
                del self._live[next(iter(self._live))]
            self._live[_digest(session)] = (rights, now + self.seconds)
        return session

    def rights_of(self, session: str) -> Rights | None:
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
    """Failed tokens per client address: past `limit` within `window` seconds, the address waits."""

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

    def wait(self, address: str) -> int | None:
        """Seconds `address` must wait before trying again, or None when it may try now."""
        with self._lock:
            failures = self._failures.get(address)
            if failures is None or len(failures) < self._limit:
                return None
            left = failures[0] + self._window - self._clock()
            return None if left <= 0 else max(1, int(left + 0.999))

    def failed(self, address: str) -> None:
        now = self._clock()
        with self._lock:
            failures = self._failures.pop(address, None)
            if failures is None:
                failures = deque(maxlen=self._limit)
            failures.append(now)
            self._failures[address] = failures
            while len(self._failures) > self._addresses:
                del self._failures[next(iter(self._failures))]


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

    def __call__(self, request: Any) -> Rights | None:
        verdict = self.check(request)
        return None if isinstance(verdict, Refusal) else verdict

    def check(self, request: Any) -> Rights | Refusal:
        header = request.headers.get("authorization")
        if header is not None:
            scheme, _, token = header.partition(" ")
            token = token.strip()
            if scheme.lower() != "bearer" or not token:
                return Refusal(401, "Authorization must be `Bearer TOKEN`")
            return self._token(token, _address(request))
        session = request.cookies.get(self.cookie)
        if session:
            rights = self.sessions.rights_of(session)
            if rights is None:
                return Refusal(401, "the session has ended: log in again")
            return ambient_refusal(request) or rights
        return Refusal(
            401,
            "this service needs a credential: `Authorization: Bearer TOKEN`, "
            "or the session cookie POST /session sets",
        )

    def login(self, token: str, request: Any) -> str | Refusal:
        """A new session id for a valid token (the cookie's value), or why not."""
        rights = self._token(token, _address(request))
        if isinstance(rights, Refusal):
            return rights
        return self.sessions.open(rights)

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

    def _token(self, token: str, address: str) -> Rights | Refusal:
        wait = self.failures.wait(address)
        if wait is not None:
            return Refusal(
                429, f"too many wrong tokens from {address or 'this client'}", wait
            )
        rights = self.tokens.rights_of(token)
        if rights is None:
            self.failures.failed(address)
            return Refusal(401, "the token is not one this service knows")
        return rights


# ---- Host and Origin ----


def split_host(value: str) -> tuple[str, str | None] | None:
    """A Host value's (name, port), lowercased (an IPv6 address in brackets), or None for what is no host."""
    found = _HOST.fullmatch(value.strip().lower())
    if found is None:
        return None
    port = found.group(2)
    return found.group(1), None if port is None else str(int(port))


def is_loopback(host: str) -> bool:
    """Whether `host` (a --host value) is a loopback address or `localhost`."""
    name = host.strip().lower().strip("[]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _is_wildcard(host: str) -> bool:
    return host.strip().strip("[]") in ("", "0.0.0.0", "::")


def service_hosts(host: str, port: int, extra: Iterable[str] = ()) -> list[str]:
    """The Host values a service bound to host:port answers: that address, the loopback names when it listens
    on loopback (or on every address), and `extra` (an --allowed-host: NAME:PORT, or NAME for any port)."""
    names: list[str] = []
    if not _is_wildcard(host):
        bare = host.strip().strip("[]").lower()
        names.append(f"[{bare}]" if ":" in bare else bare)
    if _is_wildcard(host) or is_loopback(host):
        names.extend(name for name in LOOPBACK_NAMES if name not in names)
    hosts = [f"{name}:{port}" for name in names]
    for value in extra:
        if split_host(value) is None:
            raise AuthError(
                f"--allowed-host {value!r} is not a host name or address (with :PORT or not)"
            )
        hosts.append(value.strip().lower())
    return hosts


def checked_origin(value: str) -> str:
    """An --allowed-origin as browsers send it: http(s)://HOST[:PORT], lowercased, no path."""
    scheme, sep, rest = value.strip().lower().partition("://")
    if scheme not in ("http", "https") or not sep or split_host(rest) is None:
        raise AuthError(
            f"--allowed-origin {value!r} is not http(s)://HOST[:PORT] (no path, no trailing slash)"
        )
    return f"{scheme}://{rest}"


class Boundary:
    """The Host values and Origins a service answers; `hosts` None: the loopback names on any port."""

    def __init__(
        self, hosts: Iterable[str] | None = None, origins: Iterable[str] = ()
    ) -> None:
        entries = [split_host(value) for value in (hosts or LOOPBACK_NAMES)]
        if None in entries:
            raise AuthError("an allowed host is not a host name or address")
        self._hosts = frozenset(entry for entry in entries if entry is not None)
        self._origins = frozenset(checked_origin(origin) for origin in origins)

    def host_allowed(self, value: str) -> bool:
        found = split_host(value)
        return found is not None and self._known(found[0], found[1] or "80")

    def origin_allowed(self, origin: str) -> bool:
        origin = origin.strip().lower()
        if origin in self._origins:
            return True
        scheme, sep, rest = origin.partition("://")
        found = split_host(rest) if sep and scheme in ("http", "https") else None
        if found is None:
            return False  # `null` (a sandboxed frame, a file), or no origin at all
        default = "443" if scheme == "https" else "80"
        return self._known(found[0], found[1] or default)

    def _known(self, name: str, port: str) -> bool:
        return (name, port) in self._hosts or (name, None) in self._hosts

    def refusal(
        self, method: str, headers: Mapping[str, list[str]]
    ) -> tuple[int, str, str] | None:
        """(status, field, message) for a request from outside the boundary, or None."""
        hosts = headers.get("host", [])
        if len(hosts) != 1 or not self.host_allowed(hosts[0]):
            shown = hosts[0] if len(hosts) == 1 else hosts
            return (
                421,
                "Host",
                f"Host {shown!r} is not one this service answers to (add it with --allowed-host)",
            )
        origins = headers.get("origin", [])
        if len(origins) > 1 or (origins and not self.origin_allowed(origins[0])):
            return (
                403,
                "Origin",
                (
                    f"requests from {origins[0]!r} are refused: it is not one of this service's "
                    "pages (add it with --allowed-origin)"
                ),
            )
        site = (headers.get("sec-fetch-site") or ["same-origin"])[0].lower()
        if not origins and site in ("same-site", "cross-site"):
            navigating = (
                method in ("GET", "HEAD")
                and (headers.get("sec-fetch-mode") or [""])[0] == "navigate"
                and (headers.get("sec-fetch-dest") or ["document"])[0] == "document"
            )
            if not navigating:
                return (
                    403,
                    "Sec-Fetch-Site",
                    "a request another site's page made is refused",
                )
        return None


# Added to every answer that lacks them: never sniffed as another type, never framed, no Referer sent on.
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (
        b"content-security-policy",
        b"default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    ),
    (b"cache-control", b"no-store"),
)


class BoundaryMiddleware:
    """ASGI middleware: refuses requests from outside the Boundary before any route runs, and adds
    SECURITY_HEADERS to every answer (those a route set itself are kept)."""

    def __init__(self, app: Any, boundary: Boundary) -> None:
        self.app = app
        self.boundary = boundary

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[str, list[str]] = {}
        for name, value in scope.get("headers", ()):
            headers.setdefault(name.decode("latin-1").lower(), []).append(
                value.decode("latin-1")
            )
        refused = self.boundary.refusal(scope["method"], headers)
        if refused is not None:
            status, field, message = refused
            body = json.dumps({"error": {"field": field, "message": message}}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": _secured(
                        [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                        ]
                    ),
                }
            )
            await send({"type": "http.response.body", "body": body})
            return

        async def secured(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {
                    **message,
                    "headers": _secured(list(message.get("headers", ()))),
                }
            await send(message)

        await self.app(scope, receive, secured)


def _secured(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    present = {name.lower() for name, _ in headers}
    return headers + [pair for pair in SECURITY_HEADERS if pair[0] not in present]
