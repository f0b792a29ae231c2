"""The `toolgen` command line run in this process with click's runner: its exit code, stdout and stderr apart."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from toolgen.cli.main import main


@dataclass(frozen=True)
class Ran:
    """What a run printed and how it ended, named as subprocess.CompletedProcess names them."""

    returncode: int
    stdout: str
    stderr: str


def toolgen_in(cwd: Path | None, *args: str, stdin: str | None = None, env: Mapping[str, str] | None = None) -> Ran:
    """`toolgen ARGS` in `cwd` (this process's own when None), with `stdin` as its input (empty when None)."""
    with contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext():
        result = CliRunner().invoke(main, list(args), input=stdin, env=env, prog_name="toolgen", catch_exceptions=False)
    return Ran(result.exit_code, result.stdout, result.stderr)
