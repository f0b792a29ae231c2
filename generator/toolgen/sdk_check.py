"""The build's last check before its commit point: import the staged package and run every tool's validators.

One fresh interpreter imports the package's modules from the staging folder, builds its `Tools()` registry and
feeds each tool's validators its example arguments (as data and as JSON text), a value of the wrong type, and,
when the tool has an output schema, an example result. A validator may refuse a value (ToolgenValidationError:
that is its job); anything else it raises, and any failure to import, fails the build before anything is
written. It runs with less recursion room than a fresh interpreter has, since the user's code imports the
package from deeper in its own stack.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from toolgen.diagnostics import Diagnostic, Severity
from toolgen.errors import BrokenPackageError, ExternalToolError, InvalidInputError

MARKER = "toolgen-sdk-check: "
# A fresh interpreter allows 1000 frames; the package must import and validate with this many.
RECURSION_ROOM = 800
TIMEOUT_SECONDS = 900

_SCRIPT = """\
import importlib, json, sys, traceback
folder, package, room = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, folder)
sys.setrecursionlimit(room)
MARKER = "toolgen-sdk-check: "


def described(error):
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith(folder)]
    text = f"{type(error).__name__}: {error}"[:500]
    if frames:
        place = frames[-1]
        name = place.filename[len(folder):].lstrip("/\\\\").replace("\\\\", "/")
        text += f" (at {name}:{place.lineno}: {(place.line or '').strip()[:120]})"
    return text


def report(**fields):
    print(MARKER + json.dumps(fields), flush=True)


modules = sorted(
    name[:-3]
    for name in __import__("os").listdir(f"{folder}/{package}")
    if name.endswith(".py") and name not in ("__init__.py", "__main__.py")
)
try:
    importlib.import_module(package)
    for module in modules:
        importlib.import_module(f"{package}.{module}")
except Exception as error:
    report(imported=False, error=described(error))
    raise SystemExit(0)

try:
    tools = importlib.import_module(f"{package}.tools")
    validators = importlib.import_module(f"{package}.validators")
    runtime = importlib.import_module(f"{package}._runtime")
    tools.Tools()
except Exception as error:
    report(imported=False, error=described(error))
    raise SystemExit(0)
refused = runtime.ToolgenValidationError
problems = []
for name, spec in tools.TOOLS.items():
    checks = []
    try:
        sample = runtime.example_value(spec.input_schema or {})
        checks = [
            ("its example arguments", validators.validate_tool_arguments, sample),
            ("its example arguments as JSON text", validators.validate_tool_arguments, json.dumps(sample)),
            ("arguments of the wrong type", validators.validate_tool_arguments, [None]),
        ]
        if spec.output_schema is not None:
            result = runtime.example_value(spec.output_schema)
            checks.append(("its example result", validators.validate_tool_result, result))
    except Exception as error:
        problems.append({"tool": name, "value": "an example value", "error": described(error)})
    for label, validator, value in checks:
        try:
            validator(name, value)
        except refused:
            pass
        except Exception as error:
            problems.append({"tool": name, "value": label, "error": described(error)})
            break
report(imported=True, problems=problems, tools=len(tools.TOOLS))
"""


@dataclass(frozen=True)
class CheckedPackage:
    """What the check saw: how many tools it ran the validators of."""

    tools: int


Place = Callable[[str], tuple[str, int, int]]


def check_staged_package(folder: Path, package: str, place: Place) -> CheckedPackage:
    """Import `folder/package` in a fresh interpreter and run each tool's validators; raise when it fails.

    BrokenPackageError (exit 4) when the package does not import; InvalidInputError (exit 3) with one error per
    tool, at the place `place(tool_name)` gives (path, line, col), when that tool's validators raise.
    """
    folder = folder.resolve()  # the check runs in it, so a relative path would be read twice
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8"}
    command = [sys.executable, "-I", "-B", "-c", _SCRIPT, str(folder), package, str(RECURSION_ROOM)]
    try:
        done = subprocess.run(
            command,
            cwd=folder,
            env=environment,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ExternalToolError(
            f"importing the generated package took over {TIMEOUT_SECONDS} s; nothing was written"
        ) from None
    reports = [line[len(MARKER) :] for line in done.stdout.splitlines() if line.startswith(MARKER)]
    if done.returncode or not reports:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1][:500]
        raise BrokenPackageError(
            f"checking the generated package crashed the interpreter (exit {done.returncode}: {tail}); "
            "nothing was written; this is a bug in toolgen, please report it with the schemas"
        )
    found = json.loads(reports[-1])
    if not found["imported"]:
        raise BrokenPackageError(
            f"the generated package does not import: {found['error']}; nothing was written; this is a bug in "
            "toolgen, please report it with the schemas"
        )
    if found["problems"]:
        raise InvalidInputError(_diagnostic(problem, place) for problem in found["problems"])
    return CheckedPackage(int(found["tools"]))


def _diagnostic(problem: dict[str, str], place: Place) -> Diagnostic:
    path, line, col = place(problem["tool"])
    message = (
        f"the validators toolgen generated for tool {problem['tool']!r} raise on {problem['value']} instead of "
        f"accepting or refusing it: {problem['error']}; change the tool's schema (and please report it)"
    )
    return Diagnostic(path, line, col, Severity.ERROR, "sdk-check", message)
