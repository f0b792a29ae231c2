"""Wrong tokens from one address never lock out the valid token from that address: a real server, over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.serve_helpers import SourceServer, stop_all

from toolgen.runtime.serve import auth

WRONG = "guess-0123456789abcdef"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, source_build: Path) -> Iterator[SourceServer]:
    started = SourceServer(source_build, tmp_path_factory.mktemp("lockout")).start()
    try:
        yield started
    finally:
        stop_all([started])


def _client(server: SourceServer, address: str, **headers: str) -> httpx.Client:
    """A client of `server` from the loopback `address` (wrong tokens are counted per address)."""
    return httpx.Client(
        base_url=server.url,
        timeout=30,
        headers={"Content-Type": "application/json", "Origin": server.url, **headers},
        transport=httpx.HTTPTransport(local_address=address),
    )


def _refused(answer: httpx.Response, status: int) -> str:
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert error["field"] == ""
    message: str = error["message"]
    return message


def test_a_flood_of_wrong_tokens_never_locks_out_the_valid_token_from_the_same_address(server: SourceServer) -> None:
    address = "127.0.0.7"  # every local process shares one address: the flood and the operator here are two
    bearer = {"Authorization": f"Bearer {WRONG}"}
    with _client(server, address) as flood, _client(server, address, Authorization=f"Bearer {server.token}") as mine:
        for _ in range(auth.MAX_FAILURES):
            assert _refused(flood.get("/runs", headers=bearer), 401) == "the token is not one this service knows"
        # Past the limit, wrong tokens are told to wait, by bearer or at the login alike.
        for answer in (flood.get("/runs", headers=bearer), flood.post("/session", json={"token": WRONG})):
            wait = int(answer.headers["retry-after"])
            assert 1 <= wait <= auth.FAILURE_WINDOW
            message = _refused(answer, 429)
            assert message.startswith(f"too many wrong tokens from {address}: wait ")
            assert message.endswith(" s before trying another")
        # The valid token from that same address, meanwhile: let in, as a bearer and at the login.
        assert mine.get("/runs").status_code == 200
        assert mine.get("/info").json()["rights"] == list(auth.RIGHTS)
        login = flood.post("/session", json={"token": server.token})
        assert login.status_code == 204, login.text
        assert flood.get("/runs").status_code == 200  # the session it opened
        # The flood is still throttled: the valid token reset nothing for it.
        assert flood.get("/runs", headers=bearer).status_code == 429
    # Another address was never throttled.
    with _client(server, "127.0.0.8") as other:
        assert other.get("/runs", headers=bearer).status_code == 401
    # Said once in the log, not once a wrong token.
    said = f"{auth.MAX_FAILURES} wrong tokens from {address} within 60 s: its next wrong ones are answered 429"
    assert server.log().count(said) == 1, server.log()


def test_failures_past_the_limit_keep_the_address_throttled_and_the_log_says_it_once_a_window() -> None:
    now = [0.0]
    limit = auth.FailureLimit(limit=3, window=60, clock=lambda: now[0])
    assert [limit.failed("a") for _ in range(3)] == [None, None, None]  # within the limit: 401
    assert limit.failed("a") == 60  # past it: 429, for as long as the last three stay in the window
    now[0] = 30.0
    assert limit.failed("a") == 30  # the oldest of the last three is from 0.0
    now[0] = 59.0
    assert limit.wait("a") == 1
    now[0] = 61.0
    # The last three failures were at 0, 0 and 30: the oldest has left the window.
    assert limit.wait("a") is None
    assert limit.failed("a") is None
