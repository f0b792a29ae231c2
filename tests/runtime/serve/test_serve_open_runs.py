"""A cap on the runs one credential may have open: runs waiting for a decision cannot be piled up by one holder."""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.projects import SOURCE_PACKAGE
from support.serve_helpers import LIST_FILES, Server, awaiting, over, postgres_cluster

from toolgen.runtime.serve import auth
from toolgen.runtime.serve.store import RunStore

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdefgh"
# Alice's runs count under her name; Bob's token has no name, so his count under one made from the token.
TOKENS_FILE = f"{ALICE} start,read,decide alice\n{BOB} start,read,decide\n"


def test_a_tokens_file_names_the_holder_and_a_token_without_a_name_gets_one_from_its_digest() -> None:
    tokens = auth.Tokens.from_text(TOKENS_FILE)
    alice, bob = tokens.credential_of(ALICE), tokens.credential_of(BOB)
    assert alice == auth.Credential(frozenset({"start", "read", "decide"}), "alice")
    assert bob is not None and bob.holder == auth.token_holder(BOB)
    assert bob.holder.startswith("token:") and BOB not in bob.holder and len(bob.holder) == 18
    assert tokens.credential_of("x" * 30) is None
    with pytest.raises(auth.AuthError, match=r"tokens:1: a NAME is 1 to 64 of"):
        auth.Tokens.from_text(f"{ALICE} read al/ice")
    with pytest.raises(auth.AuthError, match=r"tokens:1: a line is `TOKEN RIGHTS NAME`"):
        auth.Tokens.from_text(f"{ALICE} read alice more")
    # A page's session counts under the holder of the token it logged in with.
    sessions = auth.Sessions()
    assert sessions.credential_of(sessions.open(alice)) == alice
    # The operator's own authentication: plain rights count under one holder, a Credential under its own.
    assert auth.granted_credential(["read"]) == auth.Credential(frozenset({"read"}), auth.OPERATOR_HOLDER)
    assert auth.granted_credential(auth.Credential(frozenset({"read", "x"}), "carol")).holder == "carol"


def _starts_at_once(store: RunStore, holder: str, attempts: int, cap: int) -> int:
    """How many of `attempts` starts made at once by `holder` the store let in under `cap`."""
    let_in: list[bool] = []
    barrier = threading.Barrier(attempts)

    def start() -> None:
        barrier.wait()
        let_in.append(store.create_run(uuid.uuid4().hex, "c", {}, holder=holder, max_open=cap))

    threads = [threading.Thread(target=start) for _ in range(attempts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(let_in)


def _check_the_cap(store: RunStore) -> None:
    assert _starts_at_once(store, "alice", 12, 3) == 3
    assert store.open_runs("alice") == 3 and store.open_runs("alice", ("awaiting_approval",)) == 0
    # Another holder has a count of their own; runs without a cap are not counted against it.
    assert _starts_at_once(store, "bob", 4, 3) == 3
    assert store.create_run(uuid.uuid4().hex, "c", {}, holder="alice")
    assert store.open_runs("alice") == 4
    bobs = store._rows("SELECT id FROM toolgen_runs WHERE holder = 'bob'")
    store.update_run(bobs[0][0], "awaiting_approval", {})
    assert store.open_runs("bob", ("awaiting_approval",)) == 1 and store.open_runs("bob") == 3
    assert not store.create_run(uuid.uuid4().hex, "c", {}, holder="bob", max_open=3)
    # A run that ends frees its place.
    store.update_run(bobs[0][0], "finished", {})
    assert store.create_run(uuid.uuid4().hex, "c", {}, holder="bob", max_open=3)
    assert not store.create_run(uuid.uuid4().hex, "c", {}, holder="bob", max_open=3)


def test_starts_at_once_cannot_slip_past_the_cap_on_sqlite(tmp_path: Path) -> None:
    store = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    try:
        _check_the_cap(store)
    finally:
        store.close()


@pytest.mark.postgres
def test_starts_at_once_cannot_slip_past_the_cap_on_postgres() -> None:
    with postgres_cluster() as url:
        stores = [RunStore(url), RunStore(url)]  # two servers on one database
        try:
            let_in: list[int] = []
            threads = [
                threading.Thread(target=lambda s=s: let_in.append(_starts_at_once(s, "alice", 6, 4))) for s in stores
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert sum(let_in) == 4 and stores[0].open_runs("alice") == 4
        finally:
            for store in stores:
                store.close()


class _SourceServer(Server):
    def __init__(self, build: Path, cwd: Path, *args: str) -> None:
        super().__init__(cwd, *args, env={"PYTHONPATH": f"{build}{os.pathsep}{cwd}"}, package=SOURCE_PACKAGE)


@pytest.fixture
def capped(tmp_path: Path, source_build: Path) -> Iterator[Server]:
    (tmp_path / "tokens").write_text(TOKENS_FILE, encoding="utf-8")
    server = _SourceServer(source_build, tmp_path, "--tokens", str(tmp_path / "tokens"), "--max-open-runs", "2")
    try:
        yield server.start()
    finally:
        server.stop(graceful=False)  # the tests check the cap, not how the server stops


def _as(server: Server, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=server.url,
        timeout=30,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )


def _start(client: httpx.Client) -> httpx.Response:
    return client.post("/runs", json={"messages": [{"role": "user", "content": LIST_FILES}]})


def test_a_credential_with_as_many_runs_awaiting_approval_as_allowed_starts_no_more(capped: Server) -> None:
    with _as(capped, ALICE) as alice, _as(capped, BOB) as bob:
        first, second = (_start(alice).json()["id"] for _ in range(2))
        for run_id in (first, second):
            capped.client.headers["Authorization"] = f"Bearer {ALICE}"
            capped.wait_for(run_id, awaiting)
        refused = _start(alice)
        assert refused.status_code == 429, refused.text
        message = refused.json()["error"]["message"]
        assert message.startswith("alice has 2 runs open, 2 of them awaiting approval"), message
        # Bob's runs are his own count.
        assert _start(bob).status_code == 201
        # Deciding one of Alice's lets her start again, once.
        [pending] = capped.state(first)["pending"]
        decided = alice.post(f"/runs/{first}/approvals/{pending['id']}", json={"decision": "deny"})
        assert decided.status_code == 200, decided.text
        capped.wait_for(first, over)
        assert _start(alice).status_code == 201
        assert _start(alice).status_code == 429
