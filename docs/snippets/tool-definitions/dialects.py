"""Non-standard dialects: an error naming the construct by default, read with `normalize: [types, shapes]`."""

import json
import shutil
import tempfile
from pathlib import Path

import toolgen

here = Path(__file__).parent
with tempfile.TemporaryDirectory() as folder:
    toolgen.init_project(folder)
    tools = Path(folder, "schemas", "tools")
    for name in ("legacy.yaml", "seal-tools.json"):
        shutil.copy(here / name, tools)
    config = Path(folder, "toolgen.yaml")
    config.write_text(config.read_text().replace("schemas/tools/*.yaml", "schemas/tools/*"))

    # --8<-- [start:refused]
    try:
        toolgen.export(folder, provider="openai-chat")
    except toolgen.InvalidInputError as error:
        for found in sorted(error.diagnostics, key=lambda found: (found.path, found.line)):
            print(found.path, found.rule, found.message)
    # --8<-- [end:refused]

    # --8<-- [start:normalized]
    config.write_text(config.read_text() + "normalize: [types, shapes]\n")
    exported, warnings = toolgen.export(folder, provider="mcp")
    for found in warnings:
        print(found.rule, found.message)
    for tool in exported.tools:
        if tool["name"] != "get_current_weather":
            print(tool["name"], json.dumps(tool["inputSchema"]))
    # --8<-- [end:normalized]
    assert {found.rule for found in warnings} >= {"normalized-type", "normalized-shape"}
