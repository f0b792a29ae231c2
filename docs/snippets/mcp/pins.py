"""Import a server's tools as schema files, pinned in mcp-lock.json; a server that changes since is caught."""

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

from toolgen_sdk._runtime import connect_mcp

from toolgen import api

SERVER = [sys.executable, "-m", "toolgen_sdk", "mcp"]


folder = tempfile.mkdtemp()
atexit.register(shutil.rmtree, folder, ignore_errors=True)
shop = Path(folder) / "shop"
# toolgen import -C shop mcp -- python -m toolgen_sdk mcp (toolgen.api has a function per command)
api.import_tools(shop, SERVER)
written = {path.name for path in (shop / "schemas" / "tools").iterdir()}
print({"get_current_weather.yaml", "mcp-lock.json"} <= written)
assert "title: Current weather" in (shop / "schemas" / "tools" / "get_current_weather.yaml").read_text()

# Later the same server offers one tool more (its handlers from `--tools drifted:build`).
(Path(folder) / "drifted.py").write_text(
    "from toolgen_sdk import Tools\n\n"
    "def build():\n"
    "    tools = Tools()\n"
    "    tools.add('get_forecast', {'type': 'object'}, lambda args, ctx: 'rain')\n"
    "    return tools\n"
)
drifted = [*SERVER, "--tools", "drifted:build"]
env = {"PYTHONPATH": os.pathsep.join([folder, str(Path("generated").resolve())])}
os.environ.update(env)

# --8<-- [start:lock]
lock = shop / "schemas" / "tools" / "mcp-lock.json"
with connect_mcp(drifted, lock=lock, on_drift="warn", env=env) as connection:  # default: "refuse"
    print([drift.summary() for drift in connection.drift])
# --8<-- [end:lock]

# toolgen import -C shop mcp --check -- python -m toolgen_sdk mcp --tools drifted:build (exit 1: it drifted)
report = api.check_mcp_lock(shop, drifted)
print(report.drifted, [finding.message for finding in report.findings])
