"""Library entry points, one per project verb (build, check, init, lint, export, validate, breaking): they return
results and raise ToolgenError; they never print or exit. The payload verbs are in payload_api."""

from __future__ import annotations

import difflib
import glob
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolgen.breaking_tools import breaking_changes
from toolgen.config import (
    CONFIG_NAME,
    Config,
    display_path,
    keep_conflicts,
    load_config,
    package_name_problem,
)
from toolgen.diagnostics import Diagnostic, Severity, has_errors
from toolgen.errors import InvalidInputError, ProjectExistsError, ToolgenError
from toolgen.ir import Tool, thaw
from toolgen.lint import PROVIDERS
from toolgen.lint import lint as lint_rules
from toolgen.load import MAX_DEPTH
from toolgen.lower import lower
from toolgen.manifest import (
    MANIFEST_NAME,
    build_key,
    read_manifest,
    recorded_versions,
    render_manifest,
    text_digest,
    version_changes,
    version_findings,
)
from toolgen.render import render
from toolgen.resources import schemas_dir
from toolgen.runtime import Export, GeminiSchema, canonical_definition, export_tools
from toolgen.tool_snapshots import ToolSnapshot, dump_snapshot, load_snapshot, snapshot
from toolgen.validate import KINDS, WIRE_KINDS, Source, Tally, validate_sources
from toolgen.write import (
    foreign_entries,
    foreign_findings,
    locked,
    package_entries,
    recover,
    refuse_foreign,
    remove_package,
    stale_package_findings,
    write_package,
)

CACHE_DIR = ".toolgen-cache"
BUILTIN_PREFIX = "<toolgen>/"


@dataclass(frozen=True)
class BuildResult:
    package_dir: Path
    files: tuple[str, ...]
    written: bool
    warnings: tuple[Diagnostic, ...]
    changed: tuple[str, ...] = ()
    """The files whose bytes this build changed or created; `files` minus these were already as generated."""
    deleted: tuple[str, ...] = ()
    """Files of the old manifest this build removed."""


@dataclass(frozen=True)
class CheckResult:
    package_dir: Path
    changed: tuple[str, ...]
    diff: str
    warnings: tuple[Diagnostic, ...]
    """The build's warnings and check's own findings: files toolgen did not write outside the user zone and a
    stale old package are errors; a package made by other versions of toolgen or its generators is a warning."""

    @property
    def ok(self) -> bool:
        return not self.changed and not has_errors(self.warnings)


def _config(root: str | Path, config_path: str | Path | None) -> Config:
    root_path = Path(root).resolve()
    return load_config(root_path, Path(config_path).resolve() if config_path else None)


Progress = Callable[[str], None]


def _quiet(stage: str) -> None:
    """The default progress callback: libraries say nothing."""


def _render_all(
    config: Config, progress: Progress = _quiet
) -> tuple[dict[str, str], dict[str, str], tuple[Diagnostic, ...]]:
    progress("checking schemas")
    try:
        lowered = lower(config)
    except RecursionError:
        message = f"a schema nests deeper than toolgen follows ({MAX_DEPTH} levels); flatten it with $defs and $ref"
        raise InvalidInputError([Diagnostic(config.display, 1, 1, Severity.ERROR, "too-deep", message)]) from None
    progress(f"generating models for {len(lowered.project.tools)} tools")
    files = render(lowered.project, config)
    files[MANIFEST_NAME] = render_manifest(files, lowered.inputs)
    conflicts = keep_conflicts(config, files)
    if conflicts:
        raise InvalidInputError(conflicts)
    return files, lowered.inputs, lowered.warnings


def _current_input_hash(config: Config, path: str) -> str | None:
    builtin = path.startswith(BUILTIN_PREFIX)
    file = schemas_dir() / path[len(BUILTIN_PREFIX) :] if builtin else config.root / path
    try:
        return text_digest(file.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError):
        return None


def _unchanged_since_last_build(config: Config, config_text: str) -> bool:
    """True when neither inputs, config, generator nor the generated files changed since the cached build."""
    manifest = read_manifest(config.package_dir)
    cached = _cache_entries(config).get(config.display)
    if manifest is None or cached is None or cached.get("package_dir") != _shown(config, config.package_dir):
        return False
    recorded: dict[str, str] = manifest.get("inputs", {})
    current = {path: _current_input_hash(config, path) for path in recorded}
    if current != recorded:
        return False
    matched = {
        display_path(config.root, Path(p))
        for pattern in config.inputs
        for p in glob.glob(str(config.root / pattern), recursive=True)
        if Path(p).is_file()
    }
    if not matched <= recorded.keys():
        return False
    on_disk = _on_disk(config.package_dir, config.user_zone)
    if set(on_disk) != {*manifest.get("files", {}), MANIFEST_NAME}:
        return False
    for name, hashed in manifest.get("files", {}).items():
        if text_digest(on_disk[name]) != hashed:
            return False
    key = build_key(config_text, recorded) + text_digest(on_disk[MANIFEST_NAME])
    return bool(cached.get("key") == key)


def _shown(config: Config, path: Path) -> str:
    return display_path(config.root, path)


def _cache_entries(config: Config) -> dict[str, dict[str, Any]]:
    """The build cache: per config file of the project, the package it last wrote, its build key and warnings."""
    try:
        data = json.loads((config.root / CACHE_DIR / "build.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def _cached_warnings(config: Config) -> tuple[Diagnostic, ...]:
    """The warnings of the build that produced what is on disk: an up-to-date build repeats them."""
    try:
        recorded = _cache_entries(config).get(config.display, {})
        return tuple(Diagnostic.from_json(item) for item in recorded.get("warnings", []))
    except (ValueError, KeyError, TypeError):
        return ()


def _old_package(config: Config) -> Path | None:
    """The package this config's last build wrote, when `package:` or `output:` has moved it since.

    None when that is where the package now goes, one holds the other, or another config's build owns it.
    """
    entries = _cache_entries(config)
    recorded = entries.get(config.display, {}).get("package_dir")
    if not isinstance(recorded, str):
        return None
    old, new = (config.root / recorded).resolve(), config.package_dir.resolve()
    others = {
        (config.root / str(entry["package_dir"])).resolve()
        for name, entry in entries.items()
        if name != config.display and isinstance(entry.get("package_dir"), str)
    }
    if old == new or old in new.parents or new in old.parents or old in others:
        return None
    return old


def _cache_dir(config: Config) -> Path:
    """toolgen's own scratch space in the project, which git ignores by itself."""
    cache_dir = config.root / CACHE_DIR
    cache_dir.mkdir(exist_ok=True)
    (cache_dir / ".gitignore").write_text("*\n", encoding="utf-8")
    return cache_dir


def _remember_build(
    config: Config, config_text: str, inputs: dict[str, str], manifest: str, warnings: tuple[Diagnostic, ...]
) -> None:
    entries = _cache_entries(config)
    entries[config.display] = {
        "package_dir": _shown(config, config.package_dir),
        "key": build_key(config_text, inputs) + text_digest(manifest),
        "warnings": [w.to_json() for w in warnings],
    }
    (_cache_dir(config) / "build.json").write_text(json.dumps(entries, sort_keys=True) + "\n", encoding="utf-8")


def build(
    root: str | Path = ".",
    *,
    config_path: str | Path | None = None,
    force: bool = False,
    progress: Progress = _quiet,
) -> BuildResult:
    """Generate the SDK into <output>/<package>/; nothing is written unless every stage succeeds.

    `progress` is called with the name of each stage as it starts (the CLI shows it on a terminal).
    """
    config = _config(root, config_path)
    with locked(_cache_dir(config) / "build.lock"):
        return _build(config, config_path, force, progress)


def _build(config: Config, config_path: str | Path | None, force: bool, progress: Progress) -> BuildResult:
    recover(config.package_dir)  # a build killed earlier is finished (past its commit point) or cleared away
    old_package = _old_package(config)
    if old_package is not None:
        recover(old_package)
    config_text = (Path(config_path) if config_path else config.root / CONFIG_NAME).read_text(encoding="utf-8")
    if not force and _unchanged_since_last_build(config, config_text):
        recorded = read_manifest(config.package_dir) or {}
        names = tuple(sorted([*recorded.get("files", {}), MANIFEST_NAME]))
        return BuildResult(config.package_dir, names, False, _cached_warnings(config))
    files, inputs, warnings = _render_all(config, progress)
    manifest = files.pop(MANIFEST_NAME)
    refuse_foreign(config, files, old_package)
    progress("writing")
    written = write_package(config.package_dir, files, MANIFEST_NAME, manifest, config.user_zone)
    if old_package is not None and (old_package / MANIFEST_NAME).is_file():
        remove_package(old_package)  # after the new package is in place: a kill leaves one package at least
    _remember_build(config, config_text, inputs, manifest, warnings)
    names = tuple(sorted([*files, MANIFEST_NAME]))
    return BuildResult(config.package_dir, names, True, warnings, written.changed, written.deleted)


def _on_disk(package_dir: Path, zone: Iterable[str] = ()) -> dict[str, str]:
    """The package's files outside the user zone, as text."""
    found: dict[str, str] = {}
    for name in package_entries(package_dir, zone):
        try:
            found[name] = (package_dir / name).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            found[name] = "<binary file>\n"
        except OSError:  # a dangling or folder symlink
            found[name] = "<unreadable>\n"
    return found


def check(root: str | Path = ".", *, config_path: str | Path | None = None, progress: Progress = _quiet) -> CheckResult:
    """Render in memory and compare with what is on disk; hand edits in generated files count as drift.

    The user zone is ignored; files toolgen did not write elsewhere in the package, and a stale package an
    earlier build wrote under another name, are error findings; other generator versions only a warning.
    """
    config = _config(root, config_path)
    expected, inputs, warnings = _render_all(config, progress)
    foreign = foreign_entries(config.package_dir, expected, config.user_zone)
    actual = _on_disk(config.package_dir, config.user_zone)
    recorded = recorded_versions(read_manifest(config.package_dir))
    versions = version_changes(recorded) if recorded is not None else []
    if versions:  # versions alone are no drift: compare the manifest as the recorded versions would render it
        generated = {name: text for name, text in expected.items() if name != MANIFEST_NAME}
        expected[MANIFEST_NAME] = render_manifest(generated, inputs, recorded)
    prefix = display_path(config.root, config.package_dir)
    changed: list[str] = []
    chunks: list[str] = []
    for name in sorted((expected.keys() | actual.keys()) - set(foreign)):
        want, have = expected.get(name), actual.get(name)
        if want == have:
            continue
        changed.append(f"{prefix}/{name}")
        fromfile = f"a/{prefix}/{name}" if have is not None else "/dev/null"
        tofile = f"b/{prefix}/{name}" if want is not None else "/dev/null"
        lines = list(
            difflib.unified_diff(
                (have or "").splitlines(keepends=True),
                (want or "").splitlines(keepends=True),
                fromfile=fromfile,
                tofile=tofile,
            )
        )
        # difflib prints nothing for an empty file that appeared or vanished; the headers still name it.
        chunks.extend(lines or [f"--- {fromfile}\n", f"+++ {tofile}\n"])
    diff = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in chunks)
    findings = [
        *foreign_findings(config, foreign),
        *stale_package_findings(config, _old_package(config)),
        *version_findings(_shown(config, config.package_dir), versions, len(changed)),
    ]
    return CheckResult(config.package_dir, tuple(changed), diff, (*warnings, *findings))


INIT_CONFIG = """\
# toolgen configuration: `toolgen build` turns the schemas below into a typed Python package.
version: v1
package: {package}
output: generated
inputs:
  - schemas/tools/*.yaml
# The offline demo behind `python -m {package} "prompt"`: demo handlers and a sandbox. Drop it for production.
demo: true
"""


def init_project(root: str | Path = ".", *, package: str = "toolgen_sdk") -> tuple[Path, ...]:
    """Create toolgen.yaml and an example tool in `root`; refuses to overwrite an existing project."""
    problem = package_name_problem(package)
    if problem:
        raise InvalidInputError([Diagnostic("--package", 1, 1, Severity.ERROR, "config-package", problem)])
    root_path = Path(root).resolve()
    config_file = root_path / CONFIG_NAME
    example = root_path / "schemas" / "tools" / "get_current_weather.yaml"
    existing = [p for p in (config_file, example) if p.exists()]
    if existing:
        raise ProjectExistsError(f"{existing[0]} already exists; nothing was written")
    example.parent.mkdir(parents=True, exist_ok=True)
    example.write_text(
        (schemas_dir() / "tools" / "get_current_weather.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    config_file.write_text(INIT_CONFIG.format(package=package), encoding="utf-8")
    return (config_file, example)


def export(
    root: str | Path = ".",
    *,
    provider: str,
    config_path: str | Path | None = None,
    strict: bool | None = None,
    gemini: GeminiSchema | None = None,
) -> tuple[Export, tuple[Diagnostic, ...]]:
    """The project's tools in `provider`'s request format (see FORMATS), and the build's warnings.

    `strict` rewrites every tool for OpenAI strict mode; `gemini="openapi"` uses Gemini's `parameters` subset;
    both default to toolgen.yaml's `export` section.
    """
    config = _config(root, config_path)
    lowered = lower(config)
    definitions = [_definition(tool) for tool in lowered.project.tools]
    strict = config.export_strict if strict is None else strict
    gemini = gemini or ("openapi" if config.gemini_schema == "openapi" else "json")
    try:
        return export_tools(definitions, provider, strict=strict, gemini=gemini), lowered.warnings
    except ValueError as error:
        raise InvalidInputError([Diagnostic(config.display, 1, 1, Severity.ERROR, "export", str(error))]) from None


def _definition(tool: Tool) -> dict[str, Any]:
    return canonical_definition(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        inputSchema=thaw(tool.input_schema),
        outputSchema=thaw(tool.output_schema),
        returnDirect=tool.return_direct,
        timeout=tool.timeout,
        requiresApproval=tool.requires_approval,
        strict=tool.strict,
        meta=thaw(tool.meta),
        annotations=thaw(tool.annotations),
    )


def lint(
    root: str | Path = ".",
    *,
    config_path: str | Path | None = None,
    providers: tuple[str, ...] | None = None,
    gemini: GeminiSchema | None = None,
) -> tuple[Diagnostic, ...]:
    """Provider-compatibility findings for every tool; `providers` overrides toolgen.yaml's `lint.providers`.

    `gemini` (default: toolgen.yaml's `export.gemini_schema`) says which Gemini schema field the tools go out in;
    "openapi" adds the rules of Gemini's `parameters` subset.
    """
    config = _config(root, config_path)
    lowered = lower(config)
    chosen = providers or config.lint_providers or PROVIDERS
    subset = (gemini or config.gemini_schema) == "openapi"
    sources = [(raw, _definition(tool)) for (raw, _), tool in zip(lowered.sources, lowered.project.tools, strict=True)]
    return tuple(lint_rules(sources, chosen, gemini_subset=subset, strict=config.export_strict))


def payload_sources(paths: Iterable[str | Path], *, root: str | Path = ".") -> list[Source]:
    """Files to validate: `-` is stdin, a folder means every .json/.jsonl/.ndjson file under it (sorted)."""
    root_path = Path(root).resolve()
    sources: list[Source] = []
    for given in paths:
        if str(given) == "-":
            sources.append(Source(None, "<stdin>"))
            continue
        path = Path(given).resolve()
        found = (
            sorted(p for p in path.rglob("*") if p.suffix.lower() in (".json", ".jsonl", ".ndjson") and p.is_file())
            if path.is_dir()
            else [path]
        )
        if path.is_dir() and not found:
            problem = "no .json, .jsonl or .ndjson file in this folder: nothing to validate"
            shown = display_path(root_path, path)
            raise InvalidInputError([Diagnostic(shown, 1, 1, Severity.ERROR, "payload-unreadable", problem)])
        sources.extend(Source(p, display_path(root_path, p)) for p in found)
    return sources


def validate(
    paths: Iterable[str | Path],
    *,
    kind: str,
    root: str | Path = ".",
    config_path: str | Path | None = None,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    tally: Tally | None = None,
) -> Iterator[Diagnostic]:
    """Findings for payload records checked with the project's generated SDK, in file order.

    `kind` is one of validate.KINDS; every tool call's arguments are also checked against its tool. Pass a
    Tally to learn how many records were read, invalid, or unreadable.
    """
    if kind not in KINDS and kind not in WIRE_KINDS:
        raise ValueError(f"unknown payload kind {kind!r}; one of {', '.join((*KINDS, *WIRE_KINDS))}")
    config = _config(root, config_path)
    sources = payload_sources(paths, root=config.root)
    return validate_sources(
        sources, kind, config.output_dir, config.package, workers=workers, progress=progress, tally=tally
    )


def breaking(against: str, *, root: str | Path = ".", config_path: str | Path | None = None) -> tuple[Diagnostic, ...]:
    """Every change of the tools since `against`: breaking ones as errors, safe ones as warnings (breaking_rules.RULES).

    `against` is a file written by `breaking_snapshot`, the project directory of another checkout, or a git
    revision of the repository the project is in (its tree is unpacked into a temporary directory). Findings are
    placed in the current files; a removed tool where it was, as `AGAINST:path`. Raises InvalidInputError when
    `against` is none of these (rule against-ref) or its tools do not load.
    """
    config = _config(root, config_path)
    lowered = lower(config)
    path = Path(against)
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as error:
            raise _against_error(against, f"cannot be read ({error})") from None
        old = load_snapshot(text, against)
    elif path.is_dir():
        old = _tools_in(path.resolve(), config, against)
    else:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="toolgen-breaking-") as scratch:
            old = _tools_in(_git_tree(config, against, Path(scratch)), config, against)
    return breaking_changes(old, snapshot(lowered), [raw for raw, _ in lowered.sources], against)


def breaking_snapshot(root: str | Path = ".", *, config_path: str | Path | None = None) -> str:
    """The project's tools as the stable JSON that `breaking(against=FILE)` reads: a baseline CI can keep."""
    return dump_snapshot(snapshot(lower(_config(root, config_path))))


def _against_error(against: str, problem: str) -> InvalidInputError:
    return InvalidInputError([Diagnostic("--against", 1, 1, Severity.ERROR, "against-ref", f"{against!r} {problem}")])


def _tools_in(old_root: Path, config: Config, against: str) -> tuple[ToolSnapshot, ...]:
    """The tools of the project at `old_root`, read with its own toolgen.yaml; its errors are labeled `AGAINST:`."""
    from dataclasses import replace

    config_file = old_root / config.display
    if not config_file.is_file():
        raise _against_error(against, f"has no {config.display} for this project")
    try:
        return snapshot(lower(load_config(old_root, config_file.resolve())))
    except InvalidInputError as error:
        raise InvalidInputError(replace(d, path=f"{against}:{d.path}") for d in error.diagnostics) from None


def _git_tree(config: Config, against: str, scratch: Path) -> Path:
    """Unpack the tree of git revision `against` into `scratch`; returns the project root inside it."""
    import os
    import subprocess
    import tarfile

    problem = "is not a file, a directory or a git revision"
    try:
        where = subprocess.run(
            ["git", "-C", str(config.root), "rev-parse", "--show-toplevel", "--show-prefix"],
            capture_output=True,
            check=False,
        )
    except OSError:
        raise _against_error(against, f"{problem} (git is not available)") from None
    if where.returncode:
        raise _against_error(against, f"{problem} (the project is not in a git repository)")
    toplevel, prefix = (os.fsdecode(where.stdout).splitlines() + ["", ""])[:2]
    revision = ["git", "-C", toplevel, "rev-parse", "--verify", "--quiet", f"{against}^{{commit}}"]
    commit = subprocess.run(revision, capture_output=True, check=False)
    if against.startswith("-") or commit.returncode:
        raise _against_error(against, f"{problem} of the repository at {toplevel}")
    archive = scratch / "tree.tar"
    with archive.open("wb") as out:
        sha = os.fsdecode(commit.stdout).strip()
        done = subprocess.run(
            ["git", "-C", toplevel, "archive", "--format=tar", sha], stdout=out, stderr=subprocess.PIPE, check=False
        )
    if done.returncode:
        raise ToolgenError(f"git archive {against} failed: {os.fsdecode(done.stderr).strip()}")
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(scratch / "tree", filter="data")
        else:  # Python before 3.10.12 / 3.11.4: the tree comes from the user's own repository
            tar.extractall(scratch / "tree")
    return scratch / "tree" / prefix
