"""Format stage: one pinned formatter (ruff), run with fixed settings so no local config changes the bytes."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from toolgen.core.disk import remove_tree
from toolgen.core.errors import ExternalToolError

# ruff's default, so `ruff check` with no configuration agrees with what was generated
LINE_LENGTH = 88
TARGET = "py310"
# Files copied as written: toolgen's runtime keeps its own formatting.
VERBATIM = "_runtime/"
_MEMORY = "/dev/shm"


def _ruff() -> str:
    from ruff.__main__ import find_ruff_bin  # type: ignore[import-untyped]

    return str(find_ruff_bin())


def _run(arguments: list[str], cwd: Path) -> None:
    completed = subprocess.run(arguments, cwd=cwd, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise ExternalToolError(
            f"ruff failed ({' '.join(arguments[1:3])}): {completed.stderr.strip() or completed.stdout.strip()}"
        )


class FormatCache:
    """What ruff made of each file before, in one file, by a hash of the file's name and text, ruff's version and
    settings, and the package's top-level names (which decide what ruff counts as first-party).

    format_python reads it; `save` writes what the last call formatted, once the build has committed: a build that
    fails leaves it as it was.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._kept: dict[str, str] | None = None

    def lookup(self, keys: Iterable[str]) -> dict[str, str]:
        """What the file holds of `keys`; nothing when there is none or it cannot be read."""
        try:
            held = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(held, dict):
            return {}
        return {key: held[key] for key in keys if isinstance(held.get(key), str)}

    def keep(self, formatted: Mapping[str, str]) -> None:
        """What `save` writes: key -> formatted text."""
        self._kept = dict(formatted)

    def save(self) -> None:
        """Replace the file with what `keep` was given, if anything; one that cannot be written is only slower."""
        if self._kept is None:
            return
        partial = self.path.with_name(f"{self.path.name}.{os.getpid()}.partial")
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial.write_text(json.dumps(self._kept, sort_keys=True), encoding="utf-8")
            os.replace(partial, self.path)
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        self._kept = None


def format_python(files: Mapping[str, str], package: str, cache: FormatCache | None = None) -> dict[str, str]:
    """Sort imports and format every .py file made from the schemas; the copied runtime and other files pass
    through unchanged, so the runtime's lines match toolgen's source. Files `cache` holds skip ruff."""
    python = {name: text for name, text in files.items() if name.endswith(".py") and not name.startswith(VERBATIM)}
    if not python:
        return dict(files)
    ruff = _ruff()
    settings = [
        "--isolated",
        "--line-length",
        str(LINE_LENGTH),
        "--target-version",
        TARGET,
        "--config",
        f"lint.isort.known-first-party = [{package!r}]",
    ]
    tops = sorted({name.split("/")[0] for name in python})
    binary = os.stat(ruff)
    salt = json.dumps([ruff_version(), ruff, binary.st_size, binary.st_mtime_ns, settings, tops])
    keys = {name: hashlib.sha256(f"{salt}\0{name}\0{text}".encode()).hexdigest() for name, text in python.items()}
    known = {} if cache is None else cache.lookup(keys.values())
    missing = {name: text for name, text in python.items() if keys[name] not in known}
    formatted = {name: known[keys[name]] for name in python if name not in missing}
    if missing:
        memory = _memory_folder()
        try:
            formatted.update(_formatted(missing, tops, ruff, settings, memory))
        except OSError:
            if memory is None:
                raise
            # the memory file system is full: the disk then
            formatted.update(_formatted(missing, tops, ruff, settings, None))
    if cache is not None and (missing or len(known) != len(python)):
        cache.keep({keys[name]: formatted[name] for name in python})
    return {**files, **formatted}


def ruff_version() -> str:
    """The installed ruff's version, which the output depends on."""
    from toolgen.core.versions import installed_versions

    return installed_versions(["ruff"]).get("ruff") or "unknown"


def _memory_folder() -> str | None:
    """Where ruff's files go: a file system in memory (/dev/shm) unless TMPDIR says otherwise. On a disk, creating
    each file and freeing it again waits on the disk (1 ms a file on ext4 with discard, two waits for each of a
    large package's files); nothing here needs to outlive the build. None: the platform's temporary folder."""
    if "TMPDIR" in os.environ or not os.path.isdir(_MEMORY) or not os.access(_MEMORY, os.W_OK | os.X_OK):
        return None
    return _MEMORY


def _formatted(
    python: Mapping[str, str], tops: Iterable[str], ruff: str, options: list[str], folder: str | None
) -> dict[str, str]:
    """`python` with imports sorted and formatted by `ruff` with `options`, in files under `folder`, beside empty
    stand-ins for the package's other top-level names (`tops`): ruff counts a module there as first-party."""
    root = Path(tempfile.mkdtemp(prefix="toolgen-format-", dir=folder))
    try:
        for name, text in python.items():
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        for top in tops:
            stand_in = root / top
            if stand_in.exists():
                continue
            if top.endswith(".py"):
                stand_in.write_text("", encoding="utf-8")
            else:
                stand_in.mkdir()
        names = sorted(python)
        # Unused imports go before the imports are sorted: sorting first could merge and wrap a line of names the
        # module does not use, and its trailing comma would keep what is left wrapped.
        for rules in ("F401", "I,RUF022"):
            _run([ruff, "check", "--select", rules, "--fix", "--quiet", "--exit-zero", *options, "--", *names], root)
        _run([ruff, "format", "--quiet", *options, "--", *names], root)
        return {name: (root / name).read_text(encoding="utf-8") for name in names}
    finally:
        remove_tree(root)  # on a disk, removing each of the files ruff wrote waited 3 ms here: a few at once
