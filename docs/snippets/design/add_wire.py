"""A ninth wire, Echo, added to a copy of the runtime: one sub-package and one row of the table, nothing else."""

import shutil
import sys
import tempfile
from pathlib import Path

from toolgen.codegen.targets.package import RUNTIME_DIR  # generator/toolgen/runtime/

EXAMPLE = Path(__file__).resolve().parent / "echo"

with tempfile.TemporaryDirectory() as scratch:
    runtime = Path(scratch) / "scratch_runtime"
    shutil.copytree(RUNTIME_DIR, runtime, ignore=shutil.ignore_patterns("__pycache__", "ruff.toml"))
    # 1-3: the wire's sub-package: its codec, its detection predicates and its stream state.
    wire = runtime / "wires" / "echo"
    wire.mkdir()
    (wire / "__init__.py").write_text('"""Echo, a toy wire."""\n')
    for module in ("codec", "detect", "stream"):
        shutil.copyfile(EXAMPLE / f"{module}.py.txt", wire / f"{module}.py")
    # 4: its row in the table of wires.
    table = runtime / "wires" / "table.py"
    opening = "ROWS: tuple[Wire, ...] = (\n"
    table.write_text(table.read_text().replace(opening, opening + (EXAMPLE / "row.py.txt").read_text()))

    sys.path.insert(0, scratch)
    from scratch_runtime import NAMES, codec, detect, export_tools, stream_events

    # Detection, the codec, streaming and export now know the wire.
    assert "echo" in NAMES
    assert detect({"echo_messages": [{"role": "user", "content": "hi"}]}) == ("echo", "request")
    assert detect({"echo": "hello"}) == ("echo", "response")
    assert codec("echo").decode_response({"echo": "hello"}).message["content"] == "hello"
    reads = [b'data: {"delta": "hel"}\n\n', b'data: {"delta": "lo"}\n\n', b'data: {"done": true}\n\n']
    end = list(stream_events(reads))[-1]
    assert (type(end).__name__, end.response.message["content"], end.complete) == ("MessageEnd", "hello", True)
    tool = {"name": "t", "description": "d", "inputSchema": {"type": "object", "properties": {}}}
    assert export_tools([tool], "echo").tools[0]["type"] == "function"
    print("echo:", detect({"echo": "hello"}), end.response.message["content"])
