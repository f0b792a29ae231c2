"""A new wire as docs/design/runtime.md tells a newcomer to add one: one new sub-package and one row of the table, nothing else.

The runtime is copied to a scratch package, the wire's sub-package (codec, detection, stream state) is written
and the row is added; detection, the codec, streaming, export and the package's command line then know the wire.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from toolgen.codegen.targets.package import RUNTIME_DIR

CODEC = '''\
"""Echo: a toy wire whose bodies hold the conversation as `echo_messages` and the answer as `echo`."""

from __future__ import annotations

from typing import Any

from ..canonical import ProviderError, Request, Response


def decode_request(body: Any) -> Request:
    return Request(messages=list(body["echo_messages"]))


def encode_request(request: Request) -> dict[str, Any]:
    return {"echo_messages": request.messages}


def decode_response(body: Any) -> Response | ProviderError:
    if "echo_error" in body:
        return ProviderError("echo", body["echo_error"])
    return Response(message={"role": "assistant", "content": body["echo"]}, finish={"reason": "stop", "raw": None})


def encode_response(response: Response) -> dict[str, Any]:
    return {"echo": response.message.get("content")}


def encode_error(error: ProviderError) -> Any:
    return {"echo_error": error.message}

'''

STREAM = '''\
"""Echo's stream: payloads `{"delta": text}`, then `{"done": true}`."""

from __future__ import annotations

from typing import Any

from ...streams.state import WireState
from ..canonical import ProviderError, Response


class EchoState(WireState):
    wire = "echo"

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def feed(self, event: str | None, data: Any) -> None:
        if data.get("done"):
            self.complete = True
            return
        self.begin()
        self.text(data["delta"])
        self.parts.append(data["delta"])

    def body(self) -> dict[str, Any]:
        return {"echo": "".join(self.parts)}

    def decode(self, body: dict[str, Any]) -> Response | ProviderError:
        from .codec import decode_response

        return decode_response(body)

'''

DETECT = '''\
"""How an Echo body or stream payload is recognized."""

from __future__ import annotations

from typing import Any


def request(body: Any) -> str | None:
    return "echo" if "echo_messages" in body else None


def response(body: Any) -> str | None:
    return "echo" if "echo" in body else None


def chunk(payload: Any, event: str | None) -> str | None:
    return "echo" if "delta" in payload and len(payload) == 1 else None
'''

ROW = """\
    Wire(
        name="echo",
        title="Echo, a toy wire",
        codec="echo.codec",
        stream="echo.stream:EchoState",
        export="chat-function",
        lint=LintRules(*_FUNCTION_NAME),
        detection=Detection(
            request=Sniff("echo.detect:request", 95),
            response=Sniff("echo.detect:response", 5),
            chunk=Sniff("echo.detect:chunk", 5),
        ),
        route=Route("http://localhost:8080", "/echo", "bearer"),
        key_variable="ECHO_API_KEY",
    ),
"""

PROBE = """\
import json
from scratch_runtime import NAMES, codec, detect, export_tools, stream_events
from scratch_runtime.app.main import _parser

request = {"echo_messages": [{"role": "user", "content": "hi"}]}
print(json.dumps(detect(request)), json.dumps(detect({"echo": "hello"})))
print(codec("echo").decode_response({"echo": "hello"}).message["content"])
events = list(stream_events([b'data: {"delta": "hel"}\\n\\n', b'data: {"delta": "lo"}\\n\\n', b'data: {"done": true}\\n\\n']))
print(type(events[-1]).__name__, events[-1].response.message["content"], events[-1].complete)
tool = {"name": "t", "description": "d", "inputSchema": {"type": "object", "properties": {}}}
print(export_tools([tool], "echo").tools[0]["type"], "echo" in NAMES)
print("echo" in _parser("x").format_help())
"""


def test_a_ninth_wire_is_one_sub_package_and_one_row(tmp_path: Path) -> None:
    runtime = tmp_path / "scratch_runtime"
    shutil.copytree(RUNTIME_DIR, runtime, ignore=shutil.ignore_patterns("__pycache__", "ruff.toml"))
    wire = runtime / "wires" / "echo"
    wire.mkdir()
    (wire / "__init__.py").write_text('"""Echo, a toy wire."""\n', encoding="utf-8")
    (wire / "codec.py").write_text(CODEC, encoding="utf-8")
    (wire / "detect.py").write_text(DETECT, encoding="utf-8")
    (wire / "stream.py").write_text(STREAM, encoding="utf-8")
    table = runtime / "wires" / "table.py"
    text = table.read_text(encoding="utf-8")
    assert text.count("ROWS: tuple[Wire, ...] = (\n") == 1
    table.write_text(
        text.replace("ROWS: tuple[Wire, ...] = (\n", "ROWS: tuple[Wire, ...] = (\n" + ROW), encoding="utf-8"
    )
    changed = sorted(
        p.relative_to(runtime).as_posix()
        for p in runtime.rglob("*.py")
        if not (RUNTIME_DIR / p.relative_to(runtime)).is_file()
        or (RUNTIME_DIR / p.relative_to(runtime)).read_bytes() != p.read_bytes()
    )
    assert changed == [
        "wires/echo/__init__.py",
        "wires/echo/codec.py",
        "wires/echo/detect.py",
        "wires/echo/stream.py",
        "wires/table.py",
    ]
    ran = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PROBE)], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0] == " ".join([json.dumps(["echo", "request"]), json.dumps(["echo", "response"])])
    assert lines[1:] == ["hello", "MessageEnd hello True", "function True", "True"]
