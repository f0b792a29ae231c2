# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""run_command's sandbox: an allowlisted program with an argument list, never a shell, inside a workspace, with
time, memory and output limits; and the in-memory store behind todo_read/todo_write."""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any

# ---- run_command's sandbox ----


@dataclass(frozen=True)
class Options:
    """The options one program may take, as GNU getopt_long reads them: short letters alone (`-abc`), short letters
    whose value follows (`-n 5`, `-n5`), and the long names that spell those letters (`--lines=5`, `--lines 5`).
    Anything else is refused, whatever its spelling: `--file=/etc/passwd` would read outside the workspace."""

    flags: str = ""
    valued: str = ""
    long: tuple[tuple[str, str], ...] = ()


# Long names are taken only in full: GNU also takes any unique abbreviation, which only the program's whole list
# of options can tell apart (`--fo` is `--follow` to tail).
PROGRAM_OPTIONS: Mapping[str, Options] = MappingProxyType(
    {
        "cat": Options(
            "Abns",
            "",
            (
                ("show-all", "A"),
                ("number-nonblank", "b"),
                ("number", "n"),
                ("squeeze-blank", "s"),
            ),
        ),
        "date": Options("u", "", (("utc", "u"), ("universal", "u"))),
        "echo": Options(),  # options or not, echo only prints its arguments
        "grep": Options(
            "cEFHhilnorvwx",
            "em",
            (
                ("count", "c"),
                ("extended-regexp", "E"),
                ("fixed-strings", "F"),
                ("with-filename", "H"),
                ("no-filename", "h"),
                ("ignore-case", "i"),
                ("files-with-matches", "l"),
                ("line-number", "n"),
                ("only-matching", "o"),
                ("recursive", "r"),
                ("invert-match", "v"),
                ("word-regexp", "w"),
                ("line-regexp", "x"),
                ("regexp", "e"),
                ("max-count", "m"),
            ),
        ),
        "head": Options("", "nc", (("lines", "n"), ("bytes", "c"))),
        "ls": Options(
            "1aAlhRrSt",
            "",
            (
                ("all", "a"),
                ("almost-all", "A"),
                ("human-readable", "h"),
                ("recursive", "R"),
                ("reverse", "r"),
            ),
        ),
        "pwd": Options(),
        "tail": Options("", "nc", (("lines", "n"), ("bytes", "c"))),
        "wc": Options(
            "clmw", "", (("bytes", "c"), ("lines", "l"), ("chars", "m"), ("words", "w"))
        ),
    }
)
# Programs are looked up here only, so a file the model managed to write into the workspace is never run.
SAFE_PATH = "/usr/bin:/bin"
# tail reads a first argument such as `+1f` or `-cf` as its obsolete option form (from line 1, or the last 10
# bytes, following forever), before getopt sees it; except `-` (standard input) and `-c` (the option).
_TAIL_OBSOLETE = re.compile(r"[+-][0-9]*[bcl]?f?")
_TAIL_NOT_OBSOLETE = ("-", "-c")
# How GNU programs say an allocation failed: a line of its own (a file's name would sit between the colons).
_EXHAUSTED = re.compile(
    r"(?im)^[^\n]*(memory exhausted|cannot allocate memory|out of memory)[^\n]*$"
)


class SandboxRefusal(ValueError):
    """run_command refused a command; the message says why, in words the model can act on."""


class CommandTimeout(RuntimeError):
    """The program ran past the sandbox's timeout (or its CPU time limit) and was stopped."""


class CommandOutOfMemory(RuntimeError):
    """The program failed at the sandbox's memory limit (a regular expression that explodes, say)."""


@dataclass(frozen=True)
class Sandbox:
    """Runs one allowlisted program with an argument list inside `root`: no shell, so no pipes, globs or `$()`.

    Every operand that names a file, and the working directory, must resolve (symlinks followed) inside `root`;
    options are those of the program's `Options`, in any spelling getopt takes. The program gets a minimal
    environment, no stdin, `timeout` seconds (wall clock, and CPU time), `memory` bytes of address space, and
    `output_cap` bytes of each output (it is stopped once it has written a few caps' worth).
    """

    root: Path
    programs: frozenset[str] = frozenset(PROGRAM_OPTIONS)
    timeout: float = 10.0
    output_cap: int = 65536
    memory: int = 256 * 2**20

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
        operands, pattern_given = parse_options(program, args)
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
        # Only the cap is read back, so what is written beyond a few caps is waste (and disk): stop it there.
        output_limit = 4 * self.output_cap
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
                # The child only calls setrlimit before exec, which takes no lock a thread could hold.
                preexec_fn=_limits(self.memory, self.timeout, output_limit),  # noqa: PLW1509
            )
            code = self._wait(process, program, out, err, output_limit)
            stdout, cut_out = _head(out, self.output_cap)
            stderr, cut_err = _head(err, self.output_cap)
        # A program at the limit says so itself (an allocation failed), or aborts. Its peak memory cannot tell:
        # the child is a copy of this process until it execs (preexec_fn forks), so it counts this one's memory.
        exhausted = _EXHAUSTED.search(stderr)
        if code != 0 and (exhausted or code == -signal.SIGABRT):
            raise CommandOutOfMemory(
                f"{program} needed more than the sandbox's {self.memory // 2**20} MB of memory and was "
                "stopped; try a simpler pattern or a smaller input"
            )
        if code == -signal.SIGXCPU:
            raise CommandTimeout(
                f"{program} used more than {math.ceil(self.timeout)} seconds of CPU time and was stopped"
            )
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
        output_limit: int,
    ) -> int:
        """The exit code; a program past the time limit, or writing far past the output cap, is stopped."""
        deadline = time.monotonic() + self.timeout
        while True:
            pid, status = os.waitpid(process.pid, os.WNOHANG)
            if pid:
                process.returncode = os.waitstatus_to_exitcode(status)
                return process.returncode
            written = os.fstat(out.fileno()).st_size + os.fstat(err.fileno()).st_size
            if written > output_limit:
                _stop(process)
                return -9
            if time.monotonic() > deadline:
                _stop(process)
                raise CommandTimeout(
                    f"{program} did not finish within {self.timeout} seconds and was stopped"
                )
            time.sleep(0.01)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Kill and reap the program; by its pid, as Popen.kill() could reap it first and lose its status."""
    os.kill(process.pid, signal.SIGKILL)
    _, status, _ = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)


def _limits(memory: int, timeout: float, output_limit: int) -> Callable[[], None]:
    """What the child runs before the program: its limits, set where the program cannot raise them again."""
    import resource  # POSIX only, like the programs the sandbox runs

    cpu = max(1, math.ceil(timeout))
    asked = (
        (resource.RLIMIT_AS, memory, memory),
        # Past the soft limit SIGXCPU ends the program; the wall-clock timeout stops one that merely waits.
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        # Each output file: a write past it ends the program (SIGXFSZ) before the disk fills.
        (resource.RLIMIT_FSIZE, output_limit + 1, output_limit + 1),
        # A program that aborts at the memory limit must not leave a core file in the workspace.
        (resource.RLIMIT_CORE, 0, 0),
    )
    wanted = []
    for kind, soft, hard in asked:
        # Never above a hard limit this process already has: setrlimit would refuse, and leave none at all.
        current = resource.getrlimit(kind)[1]
        if current != resource.RLIM_INFINITY:
            soft, hard = min(soft, current), min(hard, current)
        wanted.append((kind, soft, hard))

    def limit() -> None:
        for kind, soft, hard in wanted:
            # A platform without one of them (macOS and RLIMIT_AS) keeps the others.
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(kind, (soft, hard))

    return limit


def parse_options(program: str, args: Sequence[str]) -> tuple[list[str], bool]:
    """Read `args` as GNU getopt_long does (options anywhere, `--` ends them, values attached or next) and refuse
    every option not in the program's list; (the operands, whether `-e`/`--regexp` gave grep its pattern)."""
    options = PROGRAM_OPTIONS[program]
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
            letter, attached = _long_option(program, arg, options)
            if letter in options.valued and not attached:
                position += 1
            pattern_given = pattern_given or letter == "e"
        elif arg.startswith("-") and len(arg) > 1:
            takes_next, letter = _short_options(program, arg, options)
            pattern_given = pattern_given or letter == "e"
            position += takes_next
        else:
            operands.append(arg)
    first = args[0] if args else ""
    if (
        program == "tail"
        and first not in _TAIL_NOT_OBSOLETE
        and _TAIL_OBSOLETE.fullmatch(first)
    ):
        # Whether tail reads it as options depends on how many arguments follow: refuse it either way.
        raise SandboxRefusal(
            f"tail's old form {first!r} is not allowed; write -n +N or -n N (and ./{first} for a file)"
        )
    return operands, pattern_given


def _long_option(program: str, arg: str, options: Options) -> tuple[str, bool]:
    """The short letter a `--name[=value]` spells, and whether its value is attached; a refusal otherwise."""
    name, equals, _ = arg[2:].partition("=")
    letter = dict(options.long).get(name)
    if letter is None:
        allowed = ", ".join(f"--{long}" for long, _ in options.long) or "none"
        raise SandboxRefusal(
            f"long option --{name} is not allowed for {program} (long options are taken in full, "
            f"never abbreviated; allowed: {allowed})"
        )
    if equals and letter not in options.valued:
        raise SandboxRefusal(f"option --{name} of {program} takes no value")
    return letter, bool(equals)


def _short_options(program: str, arg: str, options: Options) -> tuple[int, str]:
    """Check `-abc` / `-n5` style options; (arguments the option consumes after itself, the valued letter or '')."""
    letters = arg[1:]
    for index, letter in enumerate(letters):
        if letter in options.valued:
            attached = index + 1 < len(letters)
            return (0 if attached else 1), letter
        if letter not in options.flags:
            raise SandboxRefusal(f"option -{letter} is not allowed for {program}")
    return 0, ""


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
