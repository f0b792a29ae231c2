"""The service's trust boundary in process: tokens files, sessions, failures counted per address, hosts and origins."""

from __future__ import annotations

import re

import pytest
from test_serve_auth_rights import TOKENS, TOKENS_FILE

from toolgen.runtime.serve import auth
from toolgen.runtime.serve import boundary as edge


def test_tokens_files_are_read_strictly_and_compared_whole() -> None:
    tokens = auth.Tokens.from_text(TOKENS_FILE)
    assert len(tokens) == 5
    assert tokens.rights_of(TOKENS["all"]) == auth.ALL_RIGHTS
    assert tokens.rights_of(TOKENS["decide"]) == {"decide"}
    for near in (TOKENS["all"][:-1], TOKENS["all"] + "x", "", TOKENS["all"].upper()):
        assert tokens.rights_of(near) is None
    assert auth.Tokens.from_text("abcdefghijklmnopq read,cancel").rights_of("abcdefghijklmnopq") == {"read", "cancel"}
    for text, said in [
        ("abcdefghijklmnopq write", "unknown right 'write'"),
        ("abcdefghijklmnopq read, cancel", "tokens:1: a line is `TOKEN RIGHTS NAME`"),
        ("abcdefghijklmnopq read, cancel x", "a line is `TOKEN RIGHTS NAME`"),
        ("short", "at least 16 characters"),
        ("abcdefghijklmnopq\nabcdefghijklmnopq read", "tokens:2: this token is listed twice"),
        ("# nothing\n\n", "lists no token"),
    ]:
        with pytest.raises(auth.AuthError, match=re.escape(said)):
            auth.Tokens.from_text(text)


def test_sessions_expire_and_are_bounded_oldest_first() -> None:
    now = [0.0]
    sessions = auth.Sessions(seconds=100, limit=3, clock=lambda: now[0])
    first, second = sessions.open(frozenset({"read"})), sessions.open(auth.ALL_RIGHTS)
    assert sessions.rights_of(first) == {"read"} and sessions.rights_of("forged") is None
    now[0] = 50.0
    third, fourth = sessions.open(auth.ALL_RIGHTS), sessions.open(auth.ALL_RIGHTS)
    assert sessions.rights_of(first) is None and len(sessions) == 3
    now[0] = 100.0
    assert sessions.rights_of(second) is None and sessions.rights_of(third) == auth.ALL_RIGHTS
    sessions.close(third)
    assert sessions.rights_of(third) is None and sessions.rights_of(fourth) == auth.ALL_RIGHTS


def test_failures_are_counted_per_address_in_a_window() -> None:
    now = [0.0]
    limit = auth.FailureLimit(limit=3, window=60, clock=lambda: now[0], addresses=2)
    for _ in range(3):
        assert limit.wait("a") is None
        limit.failed("a")
    assert limit.wait("a") == 60 and limit.wait("b") is None
    now[0] = 59.5
    assert limit.wait("a") == 1
    now[0] = 60.0
    assert limit.wait("a") is None
    limit.failed("b")
    limit.failed("c")  # past `addresses`: the one failing longest ago is forgotten
    limit.failed("a")
    assert limit.wait("a") is None


def test_the_boundary_knows_its_hosts_and_origins() -> None:
    hosts = edge.service_hosts("127.0.0.1", 8000, ["proxy.example", "other.example:81"])
    assert hosts == ["127.0.0.1:8000", "localhost:8000", "[::1]:8000", "proxy.example", "other.example:81"]
    assert edge.service_hosts("::1", 80) == ["[::1]:80", "localhost:80", "127.0.0.1:80"]
    assert edge.service_hosts("10.0.0.5", 8000) == ["10.0.0.5:8000"]
    assert "localhost:8000" in edge.service_hosts("0.0.0.0", 8000)
    boundary = edge.Boundary(hosts, ["https://pages.example"])
    for host, allowed in [
        ("127.0.0.1:8000", True),
        ("LOCALHOST:8000", True),
        ("localhost:8001", False),
        ("localhost", False),
        ("proxy.example", True),
        ("proxy.example:9999", True),
        ("other.example:81", True),
        ("other.example", False),
        ("evil.example:8000", False),
        ("127.0.0.1:8000@evil", False),
        ("", False),
    ]:
        assert boundary.host_allowed(host) is allowed, host
    assert edge.Boundary(["example.org:80"]).host_allowed("example.org")
    for origin, allowed in [
        ("http://127.0.0.1:8000", True),
        ("https://localhost:8000", True),
        ("http://localhost:8001", False),
        ("https://pages.example", True),
        ("http://pages.example", False),
        ("https://proxy.example", True),
        ("null", False),
        ("http://127.0.0.1:8000.evil.example", False),
    ]:
        assert boundary.origin_allowed(origin) is allowed, origin
    assert edge.is_loopback("127.8.9.1") and edge.is_loopback("::1") and edge.is_loopback("localhost")
    assert not edge.is_loopback("0.0.0.0") and not edge.is_loopback("192.0.2.1")
