"""Instruction counts with callgrind: each case of a child process counted alone, inside `functools.reduce`.

The parent runs `python <script> <args>` under `valgrind --tool=callgrind`, collecting only inside
`functools.reduce` and writing one dump after each call of it. The child (`run_counted`) runs every case once
as a warm-up, outside any reduce, then each case `runs` times inside one reduce, in the order of its names: dump
N is case N, so imports, set-up and warm-up are never counted, and each count is the case's own. Counts are
deterministic up to the allocator and hash seed (PYTHONHASHSEED is fixed), so one process is enough.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any


def available() -> bool:
    return shutil.which("valgrind") is not None


def run_counted(cases: Mapping[str, Callable[[], Any]], runs: int) -> None:
    """The child's part: warm every case up, then run each `runs` times in one reduce (one dump each)."""
    for run in cases.values():
        run()
    for run in cases.values():
        functools.reduce(lambda _, __, run=run: run(), range(runs), None)  # type: ignore[misc]


def count(command: list[str], names: list[str], runs: int, env: Mapping[str, str] | None = None) -> dict[str, float]:
    """Instructions a run of each case, by name, from one callgrind process of `python *command` (its child part
    calls run_counted with cases in the order of `names`)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "cg"
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--collect-atstart=no",
                "--toggle-collect=functools_reduce",
                "--dump-after=functools_reduce",
                f"--callgrind-out-file={out}.%p",
                sys.executable,
                *command,
            ],
            capture_output=True,
            text=True,
            env={**os.environ, **(env or {}), "PYTHONHASHSEED": "0"},
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"callgrind failed ({done.returncode}):\n{done.stderr[-3000:]}")
        dumps = sorted(Path(folder).glob("cg.*.*"), key=lambda path: int(path.suffix[1:]))
        totals = [_total(path) for path in dumps]
    if len(totals) != len(names):
        raise SystemExit(f"callgrind wrote {len(totals)} counted dumps for {len(names)} cases")
    return {name: total / runs for name, total in zip(names, totals, strict=True)}


def _total(path: Path) -> int:
    found = re.search(r"^(?:summary|totals): (\d+)", path.read_text(encoding="utf-8", errors="replace"), re.M)
    if found is None:
        raise SystemExit(f"no instruction total in {path}")
    return int(found.group(1))
