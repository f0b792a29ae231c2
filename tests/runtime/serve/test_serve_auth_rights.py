"""The service's trust boundary on one server of many tokens: rights, Host, Origin, JSON bodies, the page's session."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.serve_helpers import Server, SourceServer

from toolgen.runtime.serve import auth

# One token per right, and one with them all.
TOKENS = {
    "all": "all-rights-token-0123456789",
    "start": "start-only-token-0123456789",
    "read": "read-only-token-01234567890",
    "decide": "decide-only-token-012345678",
    "cancel": "cancel-only-token-012345678",
}
TOKENS_FILE = "\n".join(
    [
        "# the service's tokens",
        f"{TOKENS['all']}",
        *(f"{TOKENS[right]} {right}" for right in auth.RIGHTS),
    ]
)
# Every route that needs a credential, with the right it needs; bodies that change nothing when taken.
ROUTES = [
    ("POST", "/runs", {}, "start"),
    ("GET", "/runs", None, "read"),
    ("GET", "/runs/nope", None, "read"),
    ("GET", "/runs/nope/events", None, "read"),
    ("POST", "/runs/nope/approvals/call", {"decision": "approve"}, "decide"),
    ("POST", "/runs/nope/cancel", None, "cancel"),
    ("GET", "/stats", None, "read"),
    ("GET", "/info", None, "read"),
    ("POST", "/session", {"token": "not-a-token-of-this-service"}, ""),
]
CALL = {"type": "function", "function": {"name": "run_command", "arguments": '{"program": "ls"}'}}


@pytest.fixture(scope="module")
def tokens_server(source_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SourceServer]:
    """One server of TOKENS_FILE (and a host and an origin allowed besides its own) for the tests that only ask
    it: each from its own client address, as wrong tokens are counted per address, and each with its own runs and
    sessions."""
    cwd = tmp_path_factory.mktemp("tokens")
    (cwd / "tokens").write_text(TOKENS_FILE, encoding="utf-8")
    allowed = ("--allowed-host", "proxy.example", "--allowed-origin", "https://pages.example:8443")
    server = SourceServer(source_build, cwd, "--tokens", str(cwd / "tokens"), *allowed)
    try:
        yield server.start()
    finally:
        server.stop(graceful=False)


def _bare(server: Server, address: str = "127.0.0.1", **headers: str) -> httpx.Client:
    """A client of `server` holding no credential, from `address` (wrong tokens are counted per address)."""
    return httpx.Client(
        base_url=server.url,
        timeout=30,
        headers={"Content-Type": "application/json", **headers},
        transport=httpx.HTTPTransport(local_address=address),
    )


def _ask(client: httpx.Client, method: str, path: str, body: Any, **headers: str) -> httpx.Response:
    return client.request(method, path, json=body, headers=headers)  # no body for None


def _error(answer: httpx.Response) -> tuple[int, str]:
    assert answer.headers["content-type"] == "application/json", answer.text
    assert answer.headers["x-content-type-options"] == "nosniff"
    return answer.status_code, answer.json()["error"]["field"]


# ---- credentials and rights ----


def test_every_route_needs_a_credential_and_each_right_opens_only_its_routes(tokens_server: SourceServer) -> None:
    server = tokens_server
    wrong_token = {"Authorization": "Bearer " + "x" * 30}
    with _bare(server, "127.0.0.4") as bare, _bare(server, "127.0.0.3", **wrong_token) as wrong:
        for method, path, body, _ in ROUTES:
            for client in (bare, wrong):
                answer = _ask(client, method, path, body)
                assert _error(answer) == (401, ""), (method, path, answer.text)
                assert answer.headers["www-authenticate"].startswith("Bearer"), (method, path)
        assert "Authorization: Bearer TOKEN" in bare.get("/runs").json()["error"]["message"]
        # The page is static and holds no data: served without a credential.
        assert bare.get("/").status_code == 200 and bare.get("/page.js").status_code == 200
    for name, token in TOKENS.items():
        with _bare(server, Authorization=f"Bearer {token}") as client:
            for method, path, body, right in ROUTES[:-1]:
                answer = _ask(client, method, path, body)
                if name in ("all", right):
                    # In: the route itself answers (a bad body, an unknown run), whatever it makes of the request.
                    assert answer.status_code in (200, 404, 422), (name, method, path, answer.text)
                else:
                    assert _error(answer) == (403, ""), (name, method, path, answer.text)
                    assert f"lacks the `{right}` right" in answer.json()["error"]["message"]
            assert client.get("/info").status_code == (200 if name in ("all", "read") else 403)
    with _bare(server, Authorization=f"Bearer {TOKENS['read']}") as reader:
        assert reader.get("/info").json()["rights"] == ["read"]
    with _bare(server, Authorization=f"Bearer {TOKENS['all']}") as everything:
        assert everything.get("/info").json()["rights"] == list(auth.RIGHTS)


# ---- Host, Origin, content types, client tool calls ----


def test_a_foreign_host_is_421_a_foreign_origin_403_and_a_body_not_sent_as_json_415(
    tokens_server: SourceServer,
) -> None:
    server, token = tokens_server, TOKENS["all"]
    port = server.port
    with _bare(server, "127.0.0.7", Authorization=f"Bearer {token}") as client:
        for method, path, body, _ in [*ROUTES, ("GET", "/", None, ""), ("GET", "/page.js", None, "")]:
            answer = _ask(client, method, path, body, Host=f"rebound.example:{port}")
            assert _error(answer) == (421, "Host"), (method, path, answer.text)
            for origin in (f"http://evil.example:{port}", "null", f"http://127.0.0.1:{port + 1}"):
                answer = _ask(client, method, path, body, Origin=origin)
                assert _error(answer) == (403, "Origin"), (method, path, origin, answer.text)
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "proxy.example", "proxy.example:443"):
            assert client.get("/runs", headers={"Host": host}).status_code == 200, host
        assert client.get("/runs", headers={"Host": f"localhost:{port + 1}"}).status_code == 421
        for origin in (f"http://localhost:{port}", f"http://127.0.0.1:{port}", "https://pages.example:8443"):
            assert client.get("/runs", headers={"Origin": origin}).status_code == 200, origin
        # What a browser marks as another site's request is refused, unless it is the user following a link.
        assert _error(client.get("/runs", headers={"Sec-Fetch-Site": "same-site"})) == (403, "Sec-Fetch-Site")
        link = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
        assert client.get("/", headers=link).status_code == 200

        user = {"role": "user", "content": "hi"}
        for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""):
            for path, body in [
                ("/runs", {"messages": [user]}),
                ("/runs/nope/approvals/call", {"decision": "approve"}),
                ("/session", {"token": token}),
            ]:
                answer = client.post(path, content=json.dumps(body), headers={"Content-Type": content_type})
                assert _error(answer) == (415, "Content-Type"), (path, content_type, answer.text)
        assert client.post(
            "/runs", json={"messages": [user]}, headers={"Content-Type": "Application/JSON; charset=utf-8"}
        )
        # Refused on its headers: the 15 MB it announces are never sent, yet the answer comes.
        with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
            raw.sendall(
                f"POST /runs HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
                "Content-Type: text/plain\r\nContent-Length: 15000000\r\n\r\n".encode()
            )
            assert raw.recv(65536).startswith(b"HTTP/1.1 415 ")


# ---- the page's session ----


def test_the_page_logs_in_for_a_session_cookie_that_a_cross_site_request_cannot_ride(
    tokens_server: SourceServer,
) -> None:
    server = tokens_server
    origin = {"Origin": server.url}
    with _bare(server, "127.0.0.5") as page:
        wrong = page.post("/session", json={"token": "not-the-token-0123456789"}, headers=origin)
        assert _error(wrong) == (401, "") and "set-cookie" not in wrong.headers
        assert _error(page.post("/session", json={"token": 5}, headers=origin)) == (422, "/token")
        login = page.post("/session", json={"token": TOKENS["all"]}, headers=origin)
        assert login.status_code == 204, login.text
        cookie = login.headers["set-cookie"]
        name = f"toolgen_session_{server.port}"
        assert cookie.startswith(f"{name}=")
        assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= {part.strip() for part in cookie.split(";")}
        session = page.cookies[name]
        assert len(session) >= 40 and session not in TOKENS.values()
        # The cookie stands for the token: reads, and a POST that says where it comes from.
        assert page.get("/runs").status_code == 200
        assert page.get("/info").json()["rights"] == list(auth.RIGHTS)
        started = page.post("/runs", json={"messages": [{"role": "user", "content": "hi"}]}, headers=origin)
        assert started.status_code == 201, started.text
        # Not a POST without Origin, nor what a browser says another site's page sent.
        alone = page.post("/runs", json={"messages": [{"role": "user", "content": "hi"}]})
        assert _error(alone) == (403, "Origin") and "cookie alone" in alone.json()["error"]["message"]
        assert _error(page.get("/runs", headers={"Sec-Fetch-Site": "same-site"})) == (403, "Sec-Fetch-Site")
        # A wrong bearer is not rescued by a good cookie.
        assert page.get("/runs", headers={"Authorization": "Bearer " + "y" * 30}).status_code == 401
        logout = page.delete("/session", headers=origin)
        assert logout.status_code == 204 and "Max-Age=0" in logout.headers["set-cookie"]
        assert name not in page.cookies
    with _bare(server, "127.0.0.5") as stale:
        stale.cookies.set(name, session)
        ended = stale.get("/runs")
        assert _error(ended) == (401, "") and "log in again" in ended.json()["error"]["message"]
    with _bare(server, "127.0.0.5") as reader:
        assert reader.post("/session", json={"token": TOKENS["read"]}, headers=origin).status_code == 204
        assert reader.get("/info").json()["rights"] == ["read"]
        refused = reader.post("/runs", json={"messages": [{"role": "user", "content": "hi"}]}, headers=origin)
        assert _error(refused) == (403, "") and "`start`" in refused.json()["error"]["message"]


def test_wrong_tokens_are_limited_per_client_address(tokens_server: SourceServer) -> None:
    server = tokens_server
    # Another loopback address: the failures are counted for it alone.
    with _bare(server, "127.0.0.2", Origin=server.url) as other:
        for _ in range(auth.MAX_FAILURES):
            assert other.post("/session", json={"token": "guess-0123456789abcdef"}).status_code == 401
        limited = other.post("/session", json={"token": "guess-0123456789abcdef"})
        assert _error(limited) == (429, "") and 1 <= int(limited.headers["retry-after"]) <= 60
        # A flood of wrong tokens from one address never locks the real user out: the valid token still enters.
        assert other.post("/session", json={"token": TOKENS["all"]}).status_code == 204
        bearer = other.get("/runs", headers={"Authorization": f"Bearer {TOKENS['all']}"})
        assert bearer.status_code == 200
    with _bare(server, Authorization=f"Bearer {TOKENS['all']}") as mine:
        assert mine.get("/runs").status_code == 200
        assert mine.post("/session", json={"token": TOKENS["all"]}, headers={"Origin": server.url}).status_code == 204


# ---- the page's headers ----


def test_the_page_is_served_with_a_strict_policy_and_every_answer_is_never_sniffed(
    tokens_server: SourceServer,
) -> None:
    server = tokens_server
    everything = {"Authorization": f"Bearer {TOKENS['all']}"}
    with _bare(server, "127.0.0.6") as client, _bare(server, "127.0.0.6", **everything) as holder:
        for path in ("/", "/page.js"):
            answer = client.get(path)
            policy = {
                part.strip().split(" ", 1)[0]: part.strip()
                for part in answer.headers["content-security-policy"].split(";")
            }
            assert policy["default-src"] == "default-src 'self'" and policy["script-src"] == "script-src 'self'"
            assert policy["frame-ancestors"] == "frame-ancestors 'none'" and policy["base-uri"] == "base-uri 'none'"
            assert policy["form-action"] == "form-action 'self'"
            assert policy["style-src"].startswith("style-src 'self'")
            assert answer.headers["x-frame-options"] == "DENY"
            assert answer.headers["x-content-type-options"] == "nosniff"
            assert answer.headers["referrer-policy"] == "no-referrer"
        for answer in (client.get("/runs"), holder.get("/runs"), holder.get("/nope")):
            assert answer.headers["x-content-type-options"] == "nosniff", answer.request.url
            assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
