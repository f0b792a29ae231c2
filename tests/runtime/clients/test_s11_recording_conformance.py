"""`toolgen conformance` over a folder `HTTPModel(record=DIR)` wrote against a real HTTP server on 127.0.0.1: the
body of a call that failed (cut short, past its cap, an error status the wire's error shape does not describe) is a
`skipped` row saying the failure its exchange recorded, and leaves the exit code 0; a provider's error body that
decodes is still checked; a 200 body the adapter cannot read still fails, exit 1."""

from __future__ import annotations

import gzip
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_recording_truth_replay import ANSWER, STREAM, USER, Act, chunked, served, whole

from toolgen import runtime as rt

# OpenAI's documented error body: the wire's error shape, which the adapter reads.
REFUSED = json.dumps(
    {"error": {"message": "bad key", "type": "invalid_request_error", "code": "invalid_api_key"}}
).encode()


def record(folder: Path, *acts: Act, stream: bool = False, **options: Any) -> None:
    """Each act answers one call, recorded into `folder`; the calls' failures are expected."""
    for act in acts:
        for server in served(act):
            model = rt.HTTPModel(
                server.base, "gpt-4o-mini", record=folder, retry=rt.RetryPolicy(max_retries=0), **options
            )
            try:
                if stream:
                    list(model.stream(rt.Request(USER)))
                else:
                    model.complete(rt.Request(USER))
            except rt.ProviderError:
                pass
            finally:
                model.close()


def conformance(folder: Path, output: str = "json") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolgen", "conformance", "--format", output, str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )


def rows(checked: subprocess.CompletedProcess[str]) -> dict[str, tuple[str, str, str, str]]:
    return {
        Path(row["file"]).name: (row["wire"], row["kind"], row["result"], row["detail"])
        for row in json.loads(checked.stdout)
    }


@pytest.fixture
def failures(tmp_path: Path) -> Path:
    record(
        tmp_path,
        whole(200, "OK", ANSWER[:100], length=len(ANSWER)),  # 0001: cut short of its Content-Length
        whole(200, "OK", gzip.compress(b" " * 2**20), headers={"Content-Encoding": "gzip"}),  # 0002: past its cap
        whole(500, "Internal Server Error", b'{"detail": "upstream broke"}'),  # 0003: no error shape of the wire
        whole(502, "Bad Gateway", b""),  # 0004: an empty error body
        whole(401, "Unauthorized", REFUSED),  # 0005: the wire's error body
        whole(200, "OK", ANSWER),  # 0006: an answer
        max_response_bytes=64 * 1024,
    )
    return tmp_path


def test_recorded_failures_are_skipped_with_their_reason_and_pass(failures: Path) -> None:
    checked = conformance(failures)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    found = rows(checked)
    assert {name: row[2] for name, row in found.items()} == {
        **{f"{n:04d}.request.json": "ok" for n in range(1, 7)},
        "0001.response.json": "skipped",
        "0002.response.json": "skipped",
        "0003.response.json": "skipped",
        "0004.response.json": "skipped",
        "0005.response.json": "ok",
        "0006.response.json": "ok",
    }
    assert found["0001.response.json"][:2] == ("openai-chat", "response")
    assert found["0001.response.json"][3].startswith(
        "skipped, a recorded failure: connection_error: connection error: RemoteProtocolError: peer closed"
    )
    assert found["0001.response.json"][3].endswith(
        "; the body does not decode: not a JSON body: the string that starts here has no closing `\"`: found the"
        " end of the file where it was expected (expected a JSON object)"
    )
    assert found["0002.response.json"][3].startswith(
        "skipped, a recorded failure: response_too_large: the response body decodes to more than the 64 KiB cap"
    )
    assert found["0003.response.json"][3].startswith("skipped, a recorded failure: error: upstream broke (HTTP 500);")
    assert found["0004.response.json"][3].startswith(
        "skipped, a recorded failure: http_error: HTTP 502 Bad Gateway; the body does not decode: empty input"
    )
    assert found["0005.response.json"][3] == "provider error: bad key"
    assert checked.stderr.strip() == "toolgen: 12 payload(s), 0 failed, 4 skipped (recorded failures)"


def test_a_body_the_adapter_cannot_read_still_fails(failures: Path) -> None:
    record(failures, whole(200, "OK", b'{"foo": 1}'))
    checked = conformance(failures)
    assert checked.returncode == 1
    found = rows(checked)
    assert found["0007.response.json"][2:] == (
        "fail",
        "does not decode: /: expected a request body (`messages`, `contents` or `input`) or a response body"
        " (`choices`, `candidates`, `content`, `output`, `message` or an error object)",
    )
    assert [name for name, row in found.items() if row[2] == "fail"] == ["0007.response.json"]
    text = conformance(failures, "text")
    assert text.returncode == 1 and text.stderr.strip() == "toolgen: 14 payload(s), 1 failed, 4 skipped (recorded failures)"
    assert "| skipped, a recorded failure: error: upstream broke (HTTP 500);" in text.stdout


def test_a_stream_broken_off_is_checked_as_the_partial_message_it_is(tmp_path: Path) -> None:
    record(tmp_path, chunked([*STREAM[:2], STREAM[2][:20]], end=False), stream=True)
    found = rows(conformance(tmp_path))
    assert found["0001.response.sse"][1:3] == ("stream", "ok")


def test_a_call_no_response_answered_leaves_only_its_request(tmp_path: Path) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
    model = rt.HTTPModel(f"http://127.0.0.1:{port}", "m", record=tmp_path, retry=rt.RetryPolicy(max_retries=0))
    with pytest.raises(rt.ProviderError):
        model.complete(rt.Request(USER))
    model.close()
    checked = conformance(tmp_path)
    assert checked.returncode == 0
    assert {name: row[2] for name, row in rows(checked).items()} == {"0001.request.json": "ok"}


def test_the_text_table_says_skipped_and_the_summary_counts_them(failures: Path) -> None:
    checked = conformance(failures, "text")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    results = {
        Path(cells[3]).name: cells[4]
        for line in checked.stdout.splitlines()
        if (cells := [cell.strip() for cell in line.split("|")])[1:2] != ["format"]
        and len(cells) > 5
        and cells[3].endswith(".json")
    }
    assert results["0001.response.json"] == "skipped" and results["0006.response.json"] == "ok"
    assert "4 skipped (recorded failures)" in checked.stderr, checked.stderr
