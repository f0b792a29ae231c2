"""One project reading tools in toolgen's own shape and in three providers' formats."""

import shutil
import tempfile
from pathlib import Path

import toolgen

here = Path(__file__).parent
with tempfile.TemporaryDirectory() as folder:
    toolgen.init_project(folder)
    tools = Path(folder, "schemas", "tools")
    for old in tools.iterdir():
        old.unlink()
    for name in ("weather.yaml", "openai-chat.json", "anthropic.yaml", "gemini.json"):
        shutil.copy(here / name, tools)
    config = Path(folder, "toolgen.yaml")
    config.write_text(config.read_text().replace("schemas/tools/*.yaml", "schemas/tools/*"))
    exported, warnings = toolgen.export(folder, provider="mcp")
    for tool in exported.tools:
        print(tool["name"], "|", tool["inputSchema"]["required"])
    assert [tool["name"] for tool in exported.tools] == [
        "get_current_weather",
        "get_stock_price",
        "search_docs",
        "set_light",
    ]
