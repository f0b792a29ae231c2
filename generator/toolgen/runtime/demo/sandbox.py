# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""run_command's sandbox: an allowlisted program with an argument list, never a shell, inside a workspace, with a
timeout and an output cap; and the in-memory store behind todo_read/todo_write."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any

# ---- run_command's sandbox ----

# For each allowed program: the option letters it may take alone, and those whose value follows (`-n 5`, `-n5`).
# Anything else, long options included, is refused: `grep --file=/etc/passwd` would read outside the workspace.
PROGRAM_OPTIONS: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "cat": ("bnsA", ""),
        "date": ("u", ""),
        "echo": ("", ""),  # options or not, echo only prints its arguments
        "grep": ("cEFHhilnorvwx", "em"),
        "head": ("", "nc"),
        "ls": ("1aAlhRrSt", ""),
        "pwd": ("", ""),
        "tail": ("", "nc"),
        "wc": ("clmw", ""),
    }
)
# Programs are looked up here only, so a file the model managed to write into the workspace is never run.
SAFE_PATH = "/usr/bin:/bin"


class SandboxRefusal(ValueError):
    """run_command refused a command; the message says why, in words the model can act on."""


class CommandTimeout(RuntimeError):
    """The program ran past the sandbox's timeout and was stopped."""


@dataclass(frozen=True)
class Sandbox:
    """Runs one allowlisted program with an argument list inside `root`: no shell, so no pipes, globs or `$()`.

    Every operand that names a file, and the working directory, must resolve (symlinks followed) inside `root`;
    the program gets a minimal environment, no stdin, `timeout` seconds, and `output_cap` bytes of each output.
    """

    root: Path
    programs: frozenset[str] = frozenset(PROGRAM_OPTIONS)
    timeout: float = 10.0
    output_cap: int = 65536

    def run(
        self, program: str, args: Sequence[str] = (), cwd: str = "."
    ) -> dict[str, Any]:
        if (
            isinstance(args, (str, bytes))
            or not all(isinstance(a, str) for a in args)
            or not isinstance(cwd, str)
        ):
            # A string would be split into characters; a list of words is the only form that means one thing.
            raise SandboxRefusal("args must be a list of strings and cwd a string")
        executable = self._executable(program)
        root = self.root.resolve()
        directory = self._inside(root, root, cwd, "the working directory")
        if not directory.is_dir():
            raise SandboxRefusal(
                f"the working directory {cwd!r} does not exist in the workspace"
            )
        self.check_arguments(program, list(args), root, directory)
        return self._execute([executable, *args], directory, program)

    def _executable(self, program: str) -> str:
        if program not in self.programs or program not in PROGRAM_OPTIONS:
            allowed = ", ".join(sorted(self.programs & PROGRAM_OPTIONS.keys()))
            raise SandboxRefusal(
                f"{program!r} is not an allowed program; allowed: {allowed}"
            )
        found = shutil.which(program, path=SAFE_PATH)
        if found is None:
            raise SandboxRefusal(f"{program!r} is not available on this system")
        return found

    def check_arguments(
        self, program: str, args: list[str], root: Path, directory: Path
    ) -> None:
        """Refuse options outside the program's list and file operands outside the workspace."""
        if any("\x00" in arg for arg in args):
            raise SandboxRefusal("an argument contains a NUL character")
        if program == "echo":
            return  # echo reads no file and runs nothing: every argument is a word to print
        flags, valued = PROGRAM_OPTIONS[program]
        operands: list[str] = []
        pattern_given = False
        position = 0
        while position < len(args):
            arg = args[position]
            position += 1
            if arg == "--":
                operands.extend(args[position:])
                break
            if arg.startswith("--"):
                raise SandboxRefusal(
                    f"long options such as {arg.split('=')[0]!r} are not allowed"
                )
            if arg.startswith("-") and len(arg) > 1:
                takes_next, pattern = _short_options(program, arg, flags, valued)
                pattern_given = pattern_given or pattern
                position += takes_next
                continue
            operands.append(arg)
        for operand in _file_operands(program, operands, pattern_given):
            self._inside(root, directory, operand, "a file argument")

    @staticmethod
    def _inside(root: Path, directory: Path, name: str, what: str) -> Path:
        """`name` resolved against `directory`, or a refusal when it leaves the workspace (`..`, absolute, link)."""
        candidate = Path(name)
        resolved = (
            candidate if candidate.is_absolute() else directory / candidate
        ).resolve()
        if resolved != root and root not in resolved.parents:
            raise SandboxRefusal(
                f"{what} {name!r} is outside the workspace; use paths inside it"
            )
        return resolved

    def _execute(
        self, argv: list[str], directory: Path, program: str
    ) -> dict[str, Any]:
        environment = {"PATH": SAFE_PATH, "LC_ALL": "C", "HOME": str(directory)}
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            # Output goes to files, not pipes: a chatty program cannot fill memory, and only the cap is read back.
            process = subprocess.Popen(  # argv list, no shell, allowlisted program
                argv,
                cwd=directory,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                shell=False,
            )
            code = self._wait(process, program, out, err)
            stdout, cut_out = _head(out, self.output_cap)
            stderr, cut_err = _head(err, self.output_cap)
        return {
            "exit_code": code,
            "stdout": stdout,
            "stderr": stderr,
            "truncated": cut_out or cut_err,
        }

    def _wait(
        self,
        process: subprocess.Popen[bytes],
        program: str,
        out: IO[bytes],
        err: IO[bytes],
    ) -> int:
        """The exit code; a program past the time limit, or writing far past the output cap, is stopped."""
        deadline = time.monotonic() + self.timeout
        # Only the cap is read back, so what is written beyond a few caps is waste (and disk): stop it there.
        limit = 4 * self.output_cap
        while True:
            try:
                return process.wait(timeout=0.01)
            except subprocess.TimeoutExpired:
                written = (
                    os.fstat(out.fileno()).st_size + os.fstat(err.fileno()).st_size
                )
                if written > limit:
                    process.kill()
                    process.wait()
                    return -9
                if time.monotonic() > deadline:
                    process.kill()
                    process.wait()
                    raise CommandTimeout(
                        f"{program} did not finish within {self.timeout} seconds and was stopped"
                    ) from None


def _short_options(program: str, arg: str, flags: str, valued: str) -> tuple[int, bool]:
    """Check `-abc` / `-n5` style options; (arguments the option consumes after itself, whether it gave a pattern)."""
    letters = arg[1:]
    for index, letter in enumerate(letters):
        if letter in valued:
            attached = index + 1 < len(letters)
            return (0 if attached else 1), letter == "e"
        if letter not in flags:
            raise SandboxRefusal(f"option -{letter} is not allowed for {program}")
    return 0, False


def _file_operands(program: str, operands: list[str], pattern_given: bool) -> list[str]:
    """The operands that name files: date's is a +FORMAT, grep's first the pattern (unless -e gave one)."""
    if program in ("date", "pwd"):
        for operand in operands:
            if program == "pwd" or not operand.startswith("+"):
                raise SandboxRefusal(f"{program} takes no argument {operand!r} here")
        return []
    if program == "grep" and not pattern_given:
        return operands[1:]
    return operands


def _head(stream: IO[bytes], cap: int) -> tuple[str, bool]:
    stream.seek(0)
    data = stream.read(cap + 1)
    return data[:cap].decode("utf-8", "replace"), len(data) > cap


# ---- demo handlers ----


@dataclass
class TodoStore:
    """To-do lists by conversation id; one store per registry, never module state."""

    lists: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def write(self, conversation_id: str, todos: list[dict[str, Any]]) -> int:
        with self.lock:
            self.lists[conversation_id] = [dict(t) for t in todos]
        return len(todos)

    def read(self, conversation_id: str) -> list[dict[str, Any]]:
        with self.lock:
            return [dict(t) for t in self.lists.get(conversation_id, [])]
