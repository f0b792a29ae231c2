# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The service's boundary: the Host values and Origins it answers, and the headers every answer carries.

BoundaryMiddleware refuses a request whose Host is not one of the service's own (421: DNS rebinding), whose
Origin is not one of its own pages' (403), or that a browser marks as sent by another site (Sec-Fetch-Site)
unless it is a top-level navigation; whoever the credential, before any route runs.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .auth import AuthError

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")

_HOST = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::([0-9]{1,5}))?")


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
