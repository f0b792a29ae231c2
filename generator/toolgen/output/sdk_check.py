"""The build's last check before its commit point: import the staged package and run every tool's validators.

A package whose every byte passed this check before, in an environment unchanged since, is not checked again
(toolgen.output.checked_packages); one that differs from the last that passed only in some tools' parts (their
definitions and own model modules, when those modules do nothing but make models) is imported whole and checked
for those tools; any other is checked whole, as follows.

A fresh interpreter (two at once for a large package on an idle machine, each with half the tools), started while
the build still renders so that it has imported pydantic by then (unless the package may well be one that passed:
Checker), imports the package's modules (every per-tool model module too) as the staging folder holds them: from
the files themselves, sent to it over its input while the build writes them there, or read from there once written.
It builds its `Tools()` registry and feeds each tool's validators its example arguments (as data and as JSON text),
a value of the wrong type, and, when the tool has an output schema, an example result. A validator may refuse a
value (ToolgenValidationError: that is its job); anything else it raises, and any failure to import, fails the
build before anything is written. It runs with less recursion room than a fresh interpreter has, since the user's
code imports the package from deeper in its own stack.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.disk import remove_files
from toolgen.core.errors import BrokenPackageError, ExternalToolError, InvalidInputError
from toolgen.output.check_script import CHECK_SCRIPT as _SCRIPT
from toolgen.output.checked_packages import RECORD, CheckedPackages, Stat, package_digest
from toolgen.project.manifest import source_digest

MARKER = "toolgen-sdk-check: "
# A fresh interpreter allows 1000 frames; the package must import and validate with this many.
RECURSION_ROOM = 800
TIMEOUT_SECONDS = 900
# From this many per-tool model modules on, the check runs in SHARDS interpreters at once, where cores are idle.
SHARD_FROM = 200
SHARDS = 2


# What checks a package, for the record of those that passed: the script and the room it gives.
_CHECKER = hashlib.blake2b(f"{RECURSION_ROOM}\0{_SCRIPT}".encode(), digest_size=16).hexdigest()


@dataclass(frozen=True)
class CheckedPackage:
    """What the check saw: how many tools it ran the validators of."""

    tools: int


Place = Callable[[str], tuple[str, int, int]]
# Waits for a started check: raises when it failed, at the places `Place` gives.
Verdict = Callable[[Place], CheckedPackage]
_TOOL_MODULES = "_tool_models"


class Checker:
    """Interpreters that import pydantic while the build still renders, then check the staged package sent to them.

    A package of SHARD_FROM tools or more is checked by `SHARDS` interpreters at once where cores are idle, each
    importing the whole package and every SHARDS-th per-tool module and tool: its models are most of the check.

    With a `bytecode` folder, a package whose files passed the check before, in an environment that has not changed
    since, is not checked again (toolgen.output.checked_packages, whose record lies beside that folder). The first
    interpreter starts at once when `prestart` says so; by default, when there is no record of a package that
    passed in the environment there is now (a project's first build, a new toolgen, pydantic upgraded). Otherwise
    the build may well make a package that passed before (a forced rebuild, a change undone), and the interpreter
    starts only once its package is known not to have passed: a build that turns out checked starts none, one
    that does not waits for the interpreter's start after rendering (about 0.2 s) instead of during it.
    """

    def __init__(self, bytecode: Path | None = None, prestart: bool | None = None) -> None:
        self._bytecode = bytecode
        self._record = None if bytecode is None else CheckedPackages(bytecode.parent / RECORD)
        if prestart is None:
            prestart = self._record is None or not self._record.current()
        self._waiting = [self._start()] if prestart else []
        self._running: list[tuple[subprocess.Popen[str], threading.Thread]] = []

    @staticmethod
    def _start() -> subprocess.Popen[str]:
        environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8"}
        return subprocess.Popen(
            [sys.executable, "-I", "-B", "-c", _SCRIPT, str(RECURSION_ROOM)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environment,
            text=True,
            encoding="utf-8",
            errors="replace",
        )

    def check(self, folder: Path, package: str, place: Place) -> CheckedPackage:
        """Import `folder/package` and run each tool's validators; raise when it fails (see check_staged_package)."""
        return self.start(folder, package)(place)

    def start(self, folder: Path, package: str, files: Mapping[str, str] | None = None) -> Verdict:
        """Start checking `folder/package` as it is on disk or, given its `files` (package-relative name -> text),
        as those files say, so that the build may stage them there meanwhile; returns what waits for the verdict,
        raising when the check fails (see check_staged_package)."""
        folder = folder.resolve()  # the check runs in it, so a relative path would be read twice
        digest, reused = None, None
        if files is not None and self._record is not None:
            digest = package_digest(package, files, _CHECKER)
            passed = self._record.passed(digest)
            if passed is not None:  # these bytes passed, and nothing they imported has changed since
                return lambda place: CheckedPackage(passed)
            reused = self._record.reusable()
        if files is None:
            tool_modules = folder / package / _TOOL_MODULES
            names = (
                [f"{_TOOL_MODULES}/{path.name}" for path in tool_modules.glob("*.py")] if tool_modules.is_dir() else []
            )
        else:
            names = list(files)
        # A package like the last one that passed is mostly checked already: one interpreter checks the rest.
        shards = 1 if reused is not None and reused[0] else _shards(_tool_module_count(names))
        while len(self._waiting) < shards:
            self._waiting.append(self._start())
        running, self._waiting = self._waiting[:shards], self._waiting[shards:]
        cache = None if self._bytecode is None else str(self._bytecode.resolve())
        sent = "" if files is None else json.dumps(dict(files)) + "\n"
        for shard, process in enumerate(running):
            job = {"folder": str(folder), "package": package, "shard": shard, "shards": shards, "cache": cache}
            job["sent"] = files is not None
            # With a record to keep, the check works out each tool's part key; None asks for none.
            job["passed"] = None if digest is None else [] if reused is None else reused[0]
            # A part passed under this toolgen: another one may make tools.py's code around the same definitions
            # differently, so every part is checked again after an upgrade.
            job["salt"] = f"{_CHECKER}:{source_digest()}"
            # Fed from a thread: an interpreter still importing pydantic reads only once it is done.
            feeder = threading.Thread(target=_feed, args=(process, json.dumps(job) + "\n" + sent), daemon=True)
            feeder.start()
            self._running.append((process, feeder))
        deadline = time.monotonic() + TIMEOUT_SECONDS
        started = self._running[-shards:]

        def verdict(place: Place) -> CheckedPackage:
            try:
                found = [_result(process, feeder, deadline) for process, feeder in started]
            finally:  # one that crashed or timed out leaves the others nothing to do
                _stop(started)
            return self._judged(found, place, digest, [] if reused is None else reused[1])

        return verdict

    def _judged(
        self, found: list[dict[str, Any]], place: Place, digest: str | None, reused: Iterable[Stat]
    ) -> CheckedPackage:
        broken = next((result for result in found if not result["imported"]), None)
        if broken is not None:
            raise BrokenPackageError(
                f"the generated package does not import: {broken['error']}; nothing was written; this is a bug in "
                "toolgen, please report it with the schemas"
            )
        problems = sorted((problem for result in found for problem in result["problems"]), key=lambda p: p["tool"])
        if problems:
            raise InvalidInputError(_diagnostic(problem, place) for problem in problems)
        if self._bytecode is not None:
            _prune(self._bytecode, {str(key) for result in found for key in result.get("compiled", [])})
        tools = sum(int(result["tools"]) for result in found)
        if digest is not None and self._record is not None:
            # The tools taken as checked imported what the last package's check recorded.
            environment = [*reused, *(tuple(stat) for result in found for stat in result["environment"])]
            parts = (str(part) for result in found for part in result.get("parts", []))
            self._record.add(digest, tools, environment, parts)
        return CheckedPackage(tools)

    def close(self) -> None:
        """Stop the interpreters no check was sent to, and those of a check nobody waited for (its build failed)."""
        for process in self._waiting:
            process.kill()
            process.communicate()
        _stop(self._running)
        self._waiting, self._running = [], []


def _tool_module_count(names: Iterable[str]) -> int:
    """How many of the package-relative `names` are per-tool model modules."""
    prefix = f"{_TOOL_MODULES}/"
    return sum(name.startswith(prefix) and name.endswith(".py") and "/" not in name[len(prefix) :] for name in names)


def _feed(process: subprocess.Popen[str], text: str) -> None:
    """Write `text` to the interpreter; one that crashed (or was stopped) meanwhile says so in its result."""
    stdin = process.stdin
    assert stdin is not None  # started with a pipe
    with contextlib.suppress(OSError):
        stdin.write(text)
        stdin.flush()  # communicate() closes it


def _stop(started: list[tuple[subprocess.Popen[str], threading.Thread]]) -> None:
    """Kill the interpreters of `started` still running; a kill ends a feeder blocked on a full pipe too."""
    for process, feeder in started:
        if process.poll() is None:
            process.kill()
        feeder.join()
        if process.stdout is not None and not process.stdout.closed:  # not read to its end yet
            with contextlib.suppress(OSError, ValueError):
                process.communicate()


def _shards(tool_modules: int) -> int:
    """How many interpreters check a package of `tool_modules` per-tool modules: SHARDS for a large one when the
    machine has a core to spare for each, else one. A second interpreter imports the shared modules again, which
    a busy machine (builds side by side, as the tooldefs corpus test runs them) pays for in time."""
    if tool_modules < SHARD_FROM:
        return 1
    return max(1, min(SHARDS, _idle_cores()))


def _idle_cores() -> int:
    """The cores left free by the last minute's load average and by the tasks running right now (this one aside),
    rounded; all of them where the platform says neither. The load average alone lags a minute behind: builds
    started side by side on an idle machine each took it for two free cores, and a second interpreter costs
    almost as much CPU as the first (it imports the shared modules again)."""
    cores = os.cpu_count() or 1
    busy = 0.0
    with contextlib.suppress(AttributeError, OSError):  # Windows has no load average
        busy = os.getloadavg()[0]
    with contextlib.suppress(OSError, ValueError, IndexError):  # Linux's running tasks: "0.31 0.40 0.52 3/402 901"
        running = int(Path("/proc/loadavg").read_text(encoding="ascii").split()[3].split("/")[0])
        busy = max(busy, running - 1)
    return int(cores - busy + 0.5)


def _result(process: subprocess.Popen[str], feeder: threading.Thread, deadline: float) -> dict[str, Any]:
    feeder.join(max(deadline - time.monotonic(), 0.0))  # communicate() below must not write while it does
    try:
        if feeder.is_alive():  # the interpreter reads nothing
            raise subprocess.TimeoutExpired(process.args, TIMEOUT_SECONDS)
        stdout, stderr = process.communicate(timeout=max(deadline - time.monotonic(), 0.0))
    except subprocess.TimeoutExpired:
        _stop([(process, feeder)])
        raise ExternalToolError(
            f"importing the generated package took over {TIMEOUT_SECONDS} s; nothing was written"
        ) from None
    reports = [line[len(MARKER) :] for line in stdout.splitlines() if line.startswith(MARKER)]
    if process.returncode or not reports:
        tail = (stderr.strip().splitlines() or ["no output"])[-1][:500]
        raise BrokenPackageError(
            f"checking the generated package crashed the interpreter (exit {process.returncode}: {tail}); "
            "nothing was written; this is a bug in toolgen, please report it with the schemas"
        )
    found: dict[str, Any] = json.loads(reports[-1])
    return found


def _prune(bytecode: Path, used: set[str]) -> None:
    """Remove the cached code of sources this check did not import: what earlier builds staged."""
    with contextlib.suppress(OSError):
        remove_files([path for path in bytecode.iterdir() if path.name not in used])


@contextlib.contextmanager
def started_checker(bytecode: Path | None = None, prestart: bool | None = None) -> Iterator[Checker]:
    """A Checker, started now, whose idle interpreters are stopped when the block ends.

    `bytecode` is a folder of compiled modules keyed by a hash of their source bytes (and of the Python that
    compiled them), kept between builds: a module whose bytes were checked before is imported from the code
    compiling those bytes gave then, and a whole package that passed before is not checked again (see Checker,
    and Checker for `prestart`). None compiles every module and checks every package.
    """
    checker = Checker(bytecode, prestart)
    try:
        yield checker
    finally:
        checker.close()


def check_staged_package(folder: Path, package: str, place: Place, checker: Checker | None = None) -> CheckedPackage:
    """Import `folder/package` in a fresh interpreter and run each tool's validators; raise when it fails.

    BrokenPackageError (exit 4) when the package does not import; InvalidInputError (exit 3) with one error per
    tool, at the place `place(tool_name)` gives (path, line, col), when that tool's validators raise. `checker`
    is one started earlier (started_checker), so that its interpreter has imported pydantic by now.
    """
    if checker is not None:
        return checker.check(folder, package, place)
    with started_checker() as started:
        return started.check(folder, package, place)


def _diagnostic(problem: dict[str, str], place: Place) -> Diagnostic:
    path, line, col = place(problem["tool"])
    message = (
        f"the validators toolgen generated for tool {problem['tool']!r} raise on {problem['value']} instead of "
        f"accepting or refusing it: {problem['error']}; change the tool's schema (and please report it)"
    )
    return Diagnostic(path, line, col, Severity.ERROR, "sdk-check", message)
