"""The toolgen.yaml configuration: where schemas are, where the SDK goes, what it is called."""

from __future__ import annotations

import glob
import itertools
import keyword
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Protocol

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.digests import text_digest
from toolgen.core.errors import ConfigNotFoundError, InvalidInputError
from toolgen.core.paths import display_path as display_path
from toolgen.core.paths import resolved as resolved
from toolgen.project.feature_names import FEATURES, canonical_feature, feature_problems
from toolgen.runtime import MCP, WIRES, canonical_name

CONFIG_NAME = "toolgen.yaml"
USER_DIR = "ext"  # inside the package: the user's own modules, which build never writes or deletes
# `package_layout: installable` also writes this file in the output folder, beside the package.
INSTALLABLE = "installable"
PYPROJECT = "pyproject.toml"
CACHE_DIR = ".toolgen-cache"  # in the project: toolgen's own scratch space (the build cache, its lock)
# The lock `toolgen import mcp` writes beside the schemas (the runtime's MCP_LOCK_NAME): never a tool definition.
MCP_LOCK = "mcp-lock.json"
_PACKAGE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ConfigDocument(Protocol):
    """What resolving the config reads of its parsed file: source.load's Document, or the plain read of a text
    in the subset of YAML that config_cache.py reads without a YAML parser."""

    @property
    def display(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def data(self) -> Any: ...

    def locate(self, pointer: tuple[str, ...]) -> tuple[int, int]: ...

    def diagnostic(
        self, pointer: tuple[str, ...], rule: str, message: str, severity: Severity = Severity.ERROR
    ) -> Diagnostic: ...


@dataclass(frozen=True)
class Config:
    root: Path
    package: str
    output: str
    inputs: tuple[str, ...]
    normalize: tuple[str, ...] = ()
    message_extension: str | None = None
    lint_providers: tuple[str, ...] | None = None
    remotes: tuple[tuple[str, str], ...] = ()
    # Folders outside the project that `$ref`s may read (as written in toolgen.yaml, relative to the root).
    ref_roots: tuple[str, ...] = ()
    export_strict: bool = False
    gemini_schema: str = "json"
    # `describe_meta`: the meta keys every tool folds into its description (True: all), unless a tool says.
    describe_meta: bool | tuple[str, ...] = False
    describe_meta_position: tuple[int, int] = (1, 1)
    # Wire names as the runtime's table spells them, sorted; every wire when the config names none.
    wires: tuple[str, ...] = WIRES
    # The runtime layers the package carries above validation and conversion (targets/features.py), sorted.
    features: tuple[str, ...] = FEATURES
    demo: bool = False
    display: str = CONFIG_NAME
    input_positions: tuple[tuple[int, int], ...] = ()
    keep: tuple[str, ...] = ()
    keep_positions: tuple[tuple[int, int], ...] = ()
    # "installable" also writes <output>/pyproject.toml, with package_version as its version.
    package_layout: str = "folder"
    package_version: str = "0.1.0"
    # `mcp: {lock, on_drift}`: the MCP lock built into the package (relative to the root), and what its
    # `mcp_tools` does when a server's tools differ from it.
    mcp_lock: str | None = None
    mcp_on_drift: str = "refuse"
    # The config file's text digest (line endings normalized), which the manifest records.
    text_digest: str = ""

    @property
    def output_dir(self) -> Path:
        return self.root / self.output

    @property
    def package_dir(self) -> Path:
        return self.output_dir / self.package

    @property
    def ref_scope(self) -> tuple[Path, ...]:
        """The folders (resolved, symlinks followed) whose files a `$ref` may name: the project root first, then
        every `ref_roots` folder. A file anywhere else is refused, so a schema cannot pull a machine's files in."""
        return (resolved(self.root), *(resolved(self.root / folder) for folder in self.ref_roots))

    @property
    def user_zone(self) -> tuple[str, ...]:
        """Paths inside the package (POSIX, relative to it) that belong to the user: `ext/` and `keep:`."""
        return tuple(sorted({USER_DIR, *self.keep}))


# Importing the generated package must not shadow what it or its users import.
_TAKEN_PACKAGES = frozenset(sys.stdlib_module_names) | {"pydantic", "pydantic_core", "typing_extensions", "toolgen"}


def package_name_problem(package: str) -> str | None:
    """Why `package` cannot name the generated package, or None when it can."""
    if not _PACKAGE_NAME.match(package) or keyword.iskeyword(package):
        return f"{package!r} is not a valid Python package name"
    if package in _TAKEN_PACKAGES:
        return f"{package!r} would shadow the module of that name; choose another package name"
    return None


def keep_path_problem(path: str) -> str | None:
    """Why `path` cannot be listed under `keep:`, or None when it can."""
    if "\\" in path:
        return f"{path!r} holds a backslash; separate folders with /"
    if PurePosixPath(path).is_absolute() or PureWindowsPath(path).drive:
        return f"{path!r} is absolute; keep paths are relative to the package directory"
    if ".." in path.split("/"):
        return f"{path!r} leads out of the package directory (..); keep paths stay inside it"
    if not normalized_keep_path(path):
        return f"{path!r} names the package directory itself; list paths inside it"
    return None


def output_problem(root: Path, output: str) -> str | None:
    """Why `output` cannot hold the generated package (empty, or it or a folder on the way is a file), or None."""
    if not output.strip():  # `root / ""` is the project root: a cleared value must not mean it in silence
        return (
            f"output {output!r} is empty; name the folder for the generated package (`generated`, or `.` for the "
            "project root itself)"
        )
    folder = root / output
    for candidate in (folder, *folder.parents):
        if candidate == root or root.is_relative_to(candidate):
            break
        if candidate.exists() and not candidate.is_dir():
            named = (
                f"output {output!r}"
                if candidate == folder
                else f"{display_path(root, candidate)!r} in output {output!r}"
            )
            return f"{named} is a file, not a folder; name a folder for the generated package"
    return None


def is_own_file(config: Config, path: Path) -> bool:
    """Whether `path` (resolved) is a file an input glob may match that is no tool definition: the config, the
    extension, an MCP lock, or anything in the output package or toolgen's cache (told by folder: listing them cost a
    verb more than the rest of its start once the cache held a file per module)."""
    if path == (config.root / config.display).resolve() or path.name == MCP_LOCK:
        return True
    if config.mcp_lock and path == (config.root / config.mcp_lock).resolve():
        return True
    if config.message_extension and path == (config.root / config.message_extension).resolve():
        return True
    return any(path.is_relative_to(folder.resolve()) for folder in (config.package_dir, config.root / CACHE_DIR))


def glob_base(pattern: str) -> str:
    """The folder an `inputs` pattern searches: its parts before the first one with a wildcard."""
    parts = PurePosixPath(pattern).parts
    fixed = list(itertools.takewhile(lambda part: not glob.has_magic(part), parts))
    return "/".join(fixed[:-1] if len(fixed) == len(parts) else fixed) or "."


def unmatched_input(config: Config, index: int, pattern: str, severity: Severity, own_only: bool = False) -> Diagnostic:
    """An `inputs` pattern that matches no file (or `own_only`: none but toolgen's own), at its place in toolgen.yaml."""
    line, col = config.input_positions[index] if index < len(config.input_positions) else (1, 1)
    if own_only:
        message = (
            f"input {pattern!r} matches no file but toolgen's own (the generated package, its cache, the config):"
            " those are never tool definitions"
        )
    elif severity is Severity.ERROR:
        message = f"input {pattern!r} matches no file, and no other input does: the project has no tools"
    else:
        message = f"input {pattern!r} matches no file"
    return Diagnostic(config.display, line, col, severity, "input-unmatched", message, f"/inputs/{index}")


def broken_links(config: Config, index: int, pattern: str, matches: Iterable[Path]) -> list[Diagnostic]:
    """The files an `inputs` pattern matches that are links to nothing (dangling, or a loop), at the pattern's
    place in toolgen.yaml: a tool file the user meant and that cannot be read, never skipped in silence."""
    line, col = config.input_positions[index] if index < len(config.input_positions) else (1, 1)
    return [
        Diagnostic(
            config.display,
            line,
            col,
            Severity.ERROR,
            "file-unreadable",
            f"input {pattern!r} matches {display_path(config.root, path)}, a symbolic link to nothing (dangling or a loop)",
            f"/inputs/{index}",
        )
        for path in sorted(matches)
        if path.is_symlink() and not path.exists()
    ]


def normalized_keep_path(path: str) -> str:
    """`./data/` and `data` are one path: no `.` parts, no empty parts, no trailing slash."""
    return "/".join(part for part in path.split("/") if part not in ("", "."))


def keep_conflicts(config: Config, generated: Iterable[str]) -> list[Diagnostic]:
    """A `keep:` path that is, holds or lies inside a file toolgen generates: build would have to write there."""
    names = sorted(generated)
    problems: list[Diagnostic] = []
    for index, (path, (line, col)) in enumerate(zip(config.keep, config.keep_positions, strict=True)):
        inside = [name for name in names if name.startswith(path + "/")]
        if path in names:
            problem = f"{path!r} is a file toolgen generates; keep lists only paths toolgen does not write"
        elif inside:
            problem = f"{path!r} holds files toolgen generates ({', '.join(inside[:3])}{', ...' if inside[3:] else ''})"
        elif any(path.startswith(name + "/") for name in names):
            problem = f"{path!r} lies inside a file toolgen generates"
        else:
            continue
        problems.append(Diagnostic(config.display, line, col, Severity.ERROR, "config-keep", problem, f"/keep/{index}"))
    return problems


def load_config(root: Path, path: Path | None = None, *, check_shape: bool = True) -> Config:
    """Read and check toolgen.yaml; every problem becomes a diagnostic with its line:col.

    `check_shape=False` leaves out the check against toolgen's meta-schema (and loading jsonschema for it): only
    for a text known to have passed it, as `check` knows from the manifest when the text's digest matches.
    """
    from toolgen.source.load import LoadError, load_file  # YAML loads only for the verbs that read the config

    given, path = path, path or root / CONFIG_NAME
    if not path.is_file():
        if given is not None:  # --config names the file: say that one, as given
            what = "is a folder, not a file" if path.is_dir() else "does not exist"
            raise ConfigNotFoundError(f"the config file {path} {what}")
        if root.exists() and not root.is_dir():
            raise ConfigNotFoundError(
                f"{root} is a file: give the project folder, the one holding {path.name} ({root.parent}), or name "
                "the file with --config (config_path=)"
            )
        if not root.is_dir():
            raise ConfigNotFoundError(f"the project folder {root} does not exist")
        raise ConfigNotFoundError(f"no {path.name} in {root} (run `toolgen init` to create one)")
    try:
        document = load_file(path, display_path(root, path))
    except LoadError as error:
        raise InvalidInputError([error.diagnostic]) from None
    if check_shape:
        from toolgen.source.meta import check_against_meta_schema

        diagnostics = list(check_against_meta_schema(document, "config"))
        if diagnostics:
            from toolgen.project.config_typos import config_schema, hinted  # an unknown key names the one it misspells

            raise InvalidInputError(hinted(diagnostics, config_schema()))
    return resolve_config(root, document)


def resolve_config(root: Path, document: ConfigDocument) -> Config:
    """The settings of a parsed config file, defaults and aliases resolved; InvalidInputError names what is wrong
    with them (the meta-schema's checks are load_config's)."""
    data = document.data
    package = str(data.get("package", "toolgen_sdk"))
    problem = package_name_problem(package)
    if problem:
        raise InvalidInputError([document.diagnostic(("package",), "config-package", problem)])
    extension = (data.get("extend") or {}).get("message")
    keep_listed = [str(item) for item in data.get("keep", [])]
    keep_problems = [
        document.diagnostic(("keep", str(index)), "config-keep", problem)
        for index, item in enumerate(keep_listed)
        if (problem := keep_path_problem(item))
    ]
    if keep_problems:
        raise InvalidInputError(keep_problems)
    output = str(data.get("output", "generated"))
    problem = output_problem(root, output)
    if problem:
        raise InvalidInputError([document.diagnostic(("output",), "config-output", problem)])
    wires = _names(document, ("wires",), data.get("wires"), "config-wire", canonical_name) or WIRES
    features = _names(document, ("features",), data.get("features"), "config-feature", canonical_feature)
    if "features" not in data:
        features = FEATURES
    demo = bool(data.get("demo", False))
    needs = feature_problems(features, demo=demo)
    if needs:
        where = ("features",) if "features" in data else ("demo",)
        raise InvalidInputError([document.diagnostic(where, "config-feature", problem) for problem in needs])
    providers = (data.get("lint") or {}).get("providers")
    lint_providers: tuple[str, ...] | None = None
    if providers:  # the lint stage, which knows the providers' names, loads only for a config that names some
        lint_providers = _names(document, ("lint", "providers"), providers, "config-provider", canonical_provider)
    elif providers is not None:
        lint_providers = ()  # `providers: []`: the build checks no provider's rules
    mcp = data.get("mcp") or {}
    return Config(
        root=root,
        package=package,
        output=output,
        inputs=tuple(data.get("inputs", ["schemas/**/*.yaml"])),
        normalize=tuple(sorted(set(data.get("normalize", [])))),
        message_extension=str(extension) if extension else None,
        lint_providers=lint_providers,
        wires=wires,
        features=features,
        demo=demo,
        remotes=tuple(sorted((str(k), str(v)) for k, v in (data.get("remotes") or {}).items())),
        ref_roots=tuple(str(folder) for folder in data.get("ref_roots") or ()),
        export_strict=bool((data.get("export") or {}).get("strict", False)),
        gemini_schema=str((data.get("export") or {}).get("gemini_schema", "json")),
        describe_meta=_describe_meta(data.get("describe_meta", False)),
        describe_meta_position=document.locate(("describe_meta",)) if "describe_meta" in data else (1, 1),
        display=document.display,
        input_positions=tuple(document.locate(("inputs", str(i))) for i in range(len(data.get("inputs", [])))),
        keep=tuple(normalized_keep_path(item) for item in keep_listed),
        keep_positions=tuple(document.locate(("keep", str(i))) for i in range(len(keep_listed))),
        package_layout=str(data.get("package_layout", "folder")),
        package_version=str(data.get("package_version", "0.1.0")),
        mcp_lock=str(mcp["lock"]) if mcp.get("lock") else None,
        mcp_on_drift=str(mcp.get("on_drift", "refuse")),
        text_digest=text_digest(document.text),
    )


def _describe_meta(value: Any) -> bool | tuple[str, ...]:
    """toolgen.yaml's `describe_meta` (the meta-schema checked it): true, false or the keys listed."""
    if isinstance(value, list):
        return tuple(str(key) for key in value)
    return value is True


def _names(
    document: ConfigDocument, where: tuple[str, ...], names: Any, rule: str, canonical: Callable[[str], str]
) -> tuple[str, ...]:
    """Provider names as the runtime's table spells them (aliases resolved), each unknown one a diagnostic."""
    found: set[str] = set()
    problems = []
    for index, name in enumerate(names or ()):
        try:
            found.add(canonical(str(name)))
        except ValueError as error:
            problems.append(document.diagnostic((*where, str(index)), rule, str(error)))
    if problems:
        raise InvalidInputError(problems)
    return tuple(sorted(found))


def canonical_provider(provider: str) -> str:
    """`openai` -> `openai-chat`: the table's own name for a provider; ValueError for an unknown one."""
    return MCP if provider == MCP else canonical_name(provider)
