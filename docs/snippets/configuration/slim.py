"""A package that speaks one wire, carries no runtime layer above validation and conversion, and extends messages."""

import importlib
import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path

import toolgen

here = Path(__file__).parent
with tempfile.TemporaryDirectory() as folder:
    toolgen.init_project(folder, package="chat_only")
    shutil.copy(here / "message_extension.yaml", Path(folder, "schemas"))
    # --8<-- [start:config]
    Path(folder, "toolgen.yaml").write_text(
        "version: v1\n"
        "package: chat_only\n"
        "output: generated\n"
        "inputs: [schemas/tools/*.yaml]\n"
        "wires: [openai-chat]\n"
        "features: []\n"
        "extend:\n"
        "  message: schemas/message_extension.yaml\n"
    )
    # --8<-- [end:config]
    toolgen.build(folder)
    sys.path.insert(0, str(Path(folder, "generated")))
    chat_only = importlib.import_module("chat_only")
    adapters = importlib.import_module("chat_only.adapters")

    # --8<-- [start:use]
    message = chat_only.validate_message({"role": "user", "content": "hi", "tenant": "acme"})
    print(message.tenant)
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-20250514",
        "content": [{"type": "text", "text": "hello"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    try:
        adapters.decode(body)
    except Exception as error:  # a wire the package does not carry says so, and what to add
        print(type(error).__name__, error)
    print(hasattr(adapters, "stream_events"), importlib.util.find_spec("chat_only.agent") is None)
    # --8<-- [end:use]
    assert message.tenant == "acme"
