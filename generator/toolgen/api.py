"""Library entry points, one per project verb (build, check, init, lint, export, validate, breaking): they return
results and raise ToolgenError; they never print or exit. The payload verbs are in payload_api."""

from __future__ import annotations

import contextlib
import glob
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.errors import ForeignFilesError, InterruptedAfterCommit, InvalidInputError, ToolgenError
from toolgen.core.kinds import KINDS, WIRE_KINDS

# Each verb imports the stages it runs, so `decode` or `lint` never loads the renderer (jinja2,
# datamodel-code-generator, ruff) and `check` answers from the manifest without loading the front end.
from toolgen.policy.build_lint import build_lint, lint_lowered
from toolgen.policy.build_lint import definition as _definition
from toolgen.project.config import (
    CACHE_DIR,
    CONFIG_NAME,
    Config,
    display_path,
    keep_conflicts,
    load_config,
)
from toolgen.project.input_digests import current_digests
from toolgen.project.manifest import (
    MANIFEST_NAME,
    build_key,
    config_record,
    read_manifest,
    render_manifest,
    text_digest,
)
from toolgen.project.recorded import recorded_config, recorded_project

if TYPE_CHECKING:
    from toolgen.codegen.format import FormatCache
    from toolgen.output.beside import BesidePlan
    from toolgen.output.drift import CheckResult
    from toolgen.output.sdk_check import Verdict
    from toolgen.payloads.validation.local import Source, Tally
    from toolgen.policy.breaking.snapshots import ToolSnapshot
    from toolgen.project.scaffold import InitResult
    from toolgen.runtime import Export, GeminiSchema


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


def _config(root: str | Path, config_path: str | Path | None) -> Config:
    root_path = Path(root).resolve()
    return load_config(root_path, Path(config_path).resolve() if config_path else None)


def _checked_before(root: str | Path, config_path: str | Path | None) -> tuple[Config, bool]:
    """The config, and whether the package's manifest records it and every input as they are now: then the
    meta-schema checks (and jsonschema, to run them) are left out, since the build that made it ran them."""
    root_path, given = Path(root).resolve(), Path(config_path).resolve() if config_path else None
    known = recorded_project(root_path, given)
    return (known, True) if known is not None else (load_config(root_path, given), False)


Progress = Callable[[str], None]
# What ruff made of each generated file, by its text (format.FormatCache), in the project's scratch folder.
FORMAT_CACHE = "formatted.json"


def _quiet(stage: str) -> None:
    """The default progress callback: libraries say nothing."""


def _render_all(
    config: Config,
    progress: Progress = _quiet,
    format_cache: FormatCache | None = None,
    rendered: Callable[[Mapping[str, str], Mapping[str, str]], object] | None = None,
    linted: list[Diagnostic] | None = None,
) -> tuple[dict[str, str], dict[str, str], tuple[Diagnostic, ...], dict[str, str]]:
    """The package's files (its manifest included), the inputs' hashes, warnings, and the files beside it;
    `format_cache` keeps what the formatter made of each file for the next build (a build's, in its scratch);
    `rendered` is given the package's files and the files beside it as soon as they are formatted, before the
    manifest hashes them. With `linted`, the targeted providers' lint runs first (build_lint.py): an error
    raises LintFailedError, the warnings go into `linted` (not into the manifest)."""
    from toolgen.codegen.render import render
    from toolgen.codegen.targets.installable import beside_files
    from toolgen.ir.lower import lower
    from toolgen.source.load import MAX_DEPTH

    progress("checking schemas")
    try:
        lowered = lower(config)
    except RecursionError:
        message = f"a schema nests deeper than toolgen follows ({MAX_DEPTH} levels); flatten it with $defs and $ref"
        raise InvalidInputError([Diagnostic(config.display, 1, 1, Severity.ERROR, "too-deep", message)]) from None
    if linted is not None:
        linted.extend(build_lint(config, lowered))
    progress(f"generating models for {len(lowered.project.tools)} tools")
    files = render(lowered.project, config, format_cache)
    beside = beside_files(config, lowered.project)
    if rendered is not None:
        rendered(files, beside)
    files[MANIFEST_NAME] = render_manifest(
        files, lowered.inputs, config=config_record(config), warnings=lowered.warnings, beside=beside
    )
    conflicts = keep_conflicts(config, files)
    if conflicts:
        raise InvalidInputError(conflicts)
    return files, lowered.inputs, lowered.warnings, beside


def _unchanged_since_last_build(config: Config, config_text: str) -> bool:
    """True when neither inputs, config, generator nor the generated files changed since the cached build."""
    manifest = read_manifest(config.package_dir)
    cached = _cache_entries(config).get(config.display)
    if manifest is None or cached is None or cached.get("package_dir") != _shown(config, config.package_dir):
        return False
    recorded: dict[str, str] = manifest.get("inputs", {})
    if current_digests(config.root, recorded) != recorded:
        return False
    matched = {
        display_path(config.root, Path(p))
        for pattern in config.inputs
        for p in glob.glob(str(config.root / pattern), recursive=True)
        if Path(p).is_file()
    }
    if not matched <= recorded.keys():
        return False
    from toolgen.output.drift import on_disk

    found = on_disk(config.package_dir, config.user_zone)
    if set(found) != {*manifest.get("files", {}), MANIFEST_NAME}:
        return False
    for name, hashed in manifest.get("files", {}).items():
        if text_digest(found[name]) != hashed:
            return False
    key = build_key(config_text, recorded) + text_digest(found[MANIFEST_NAME])
    from toolgen.output.beside import beside_unchanged

    return bool(cached.get("key") == key) and beside_unchanged(config)


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
    current_digests(config.root, inputs, remember=True)  # what each input's text parses to, for the next verb


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
    from toolgen.output.building import build_lock, environment_errors

    config = _config(root, config_path)
    committed: list[Path] = []
    with _interrupted_after(committed), environment_errors(config.root), build_lock(config.root) as refused:
        return _build(config, config_path, force, progress, refused, committed)


@contextlib.contextmanager
def _interrupted_after(committed: list[Path]) -> Iterator[None]:
    """Ctrl-C once the build has committed (`committed` is not empty) is InterruptedAfterCommit: the package is
    written in full, and the message must not say that nothing was."""
    try:
        yield
    except KeyboardInterrupt as interrupt:
        if committed and not isinstance(interrupt, InterruptedAfterCommit):
            raise InterruptedAfterCommit from None
        raise


def _build(
    config: Config,
    config_path: str | Path | None,
    force: bool,
    progress: Progress,
    refused: OSError | None,
    committed: list[Path],
) -> BuildResult:
    from toolgen.codegen.format import FormatCache
    from toolgen.output.beside import on_disk as beside_on_disk
    from toolgen.output.beside import plan_beside
    from toolgen.output.building import commit_build, work_dir
    from toolgen.output.building import recover_package as recover
    from toolgen.output.drift import on_disk
    from toolgen.output.sdk_check import started_checker
    from toolgen.output.write import refuse_foreign

    recover(config, config.package_dir)  # a build killed earlier is finished (past its commit point) or cleared
    old_package = _old_package(config)
    if old_package is not None:
        recover(config, old_package)
    config_text = (Path(config_path) if config_path else config.root / CONFIG_NAME).read_text(encoding="utf-8")
    if not force and _unchanged_since_last_build(config, config_text):
        recorded = read_manifest(config.package_dir) or {}
        names = tuple(sorted([*recorded.get("files", {}), MANIFEST_NAME]))
        return BuildResult(config.package_dir, names, False, _cached_warnings(config))
    # The check's interpreter starts now and imports pydantic while the package renders.
    bytecode = config.root / CACHE_DIR / "bytecode"
    with started_checker(bytecode) if refused is None else contextlib.nullcontext() as checker:
        format_cache = None if refused is not None else FormatCache(config.root / CACHE_DIR / FORMAT_CACHE)
        verdicts: list[Verdict] = []
        plans: list[BesidePlan] = []  # the plan of the files beside the package, made once, when the check starts

        def start_check(rendered: Mapping[str, str], beside: Mapping[str, str]) -> None:
            # The check imports the files as rendered while the build hashes, plans and stages them: its verdict
            # is awaited before the commit point, and it is stopped if the build fails before then.
            if checker is None:
                return
            # A build refused for files toolgen did not write leaves everything as it was, the check's compiled
            # modules in the cache included: so it is refused before the check compiles anything.
            plans.append(plan_beside(config, beside))
            _refuse_foreign_beside(config, plans[0])
            refuse_foreign(config, rendered, old_package)
            verdicts.append(checker.start(work_dir(config, config.package_dir) / "checked", config.package, rendered))

        linted: list[Diagnostic] = []
        files, inputs, warnings, beside = _render_all(config, progress, format_cache, start_check, linted)
        warnings = (*warnings, *linted)  # lint's warnings are printed and cached, not recorded in the manifest
        manifest = files.pop(MANIFEST_NAME)
        plan = plans[0] if plans else plan_beside(config, beside)
        if refused is not None:  # a read-only checkout, without the cache: up to date when the files are
            if on_disk(config.package_dir, config.user_zone) == {**files, MANIFEST_NAME: manifest} and not (
                plan.delete or plan.foreign or beside_on_disk(config, set(beside)) != beside
            ):
                return BuildResult(config.package_dir, tuple(sorted([*files, MANIFEST_NAME])), False, warnings)
            raise refused
        _refuse_foreign_beside(config, plan)
        progress("checking and writing")
        # A forced build rewrites every file; another moves in only those whose bytes differ.
        verdict = verdicts[0] if verdicts else None
        written = commit_build(config, files, manifest, old_package, plan, verdict, rewrite_unchanged=force)
        committed.append(config.package_dir)
    if format_cache is not None:
        format_cache.save()
    _remember_build(config, config_text, inputs, manifest, warnings)
    names = tuple(sorted([*files, MANIFEST_NAME]))
    return BuildResult(config.package_dir, names, True, warnings, written.changed, written.deleted)


def _refuse_foreign_beside(config: Config, plan: BesidePlan) -> None:
    """Stop the build when a file beside the package that it would overwrite is not one toolgen wrote."""
    from toolgen.output.beside import beside_findings

    if plan.foreign:
        raise ForeignFilesError(
            beside_findings(config, plan.foreign), "the output folder holds files toolgen did not write"
        )


def check(
    root: str | Path = ".", *, config_path: str | Path | None = None, full: bool = False, progress: Progress = _quiet
) -> CheckResult:
    """Whether the package is what the schemas produce; hand edits in generated files count as drift.

    The manifest answers first, without rendering, when every input, the config, toolgen and the libraries that
    shape its output and every generated file are what it records (instant_check.py). Otherwise, or with
    `full`, everything is rendered in memory and compared with the files on disk (drift.compare); without `full`,
    ruff formats only the files the last build's format cache does not hold.
    """
    from toolgen.output.drift import compare, not_built
    from toolgen.output.instant_check import instant_check

    if not full:
        answer = instant_check(Path(root).resolve(), Path(config_path).resolve() if config_path else None)
        if answer is not None:
            return answer
    from toolgen.codegen.format import FormatCache

    config = _config(root, config_path)
    unbuilt = not_built(config, _old_package(config))
    if unbuilt is not None:  # "build first", once the front end and the lint find the input fine (as build would)
        from toolgen.ir.lower import lower

        build_lint(config, lower(config))
        return unbuilt
    # Read, never written (check changes nothing on disk): ruff skips what the last build formatted; `full`
    # trusts no record of an earlier run, this one included.
    formatted = None if full else FormatCache(config.root / CACHE_DIR / FORMAT_CACHE)
    expected, inputs, warnings, beside = _render_all(config, progress, formatted, linted=[])
    return compare(config, expected, inputs, warnings, _old_package(config), beside)


def init_project(root: str | Path = ".", *, package: str = "toolgen_sdk") -> InitResult:
    """Create toolgen.yaml and an example tool in `root`, and keep ruff, black and isort off the generated
    package (in pyproject.toml, adding only what is missing); refuses to overwrite an existing project."""
    from toolgen.project.scaffold import init_project as scaffold_project

    return scaffold_project(Path(root).resolve(), package)


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
    from toolgen.ir.lower import lower
    from toolgen.runtime import export_tools

    config, checked = _checked_before(root, config_path)
    lowered = lower(config, check_shapes=not checked)
    definitions = [_definition(tool) for tool in lowered.project.tools]
    strict = config.export_strict if strict is None else strict
    gemini = gemini or ("openapi" if config.gemini_schema == "openapi" else "json")
    try:
        return export_tools(definitions, provider, strict=strict, gemini=gemini), lowered.warnings
    except ValueError as error:
        raise InvalidInputError([Diagnostic(config.display, 1, 1, Severity.ERROR, "export", str(error))]) from None


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
    from toolgen.ir.lower import lower
    from toolgen.policy.lint import PROVIDERS

    config, checked = _checked_before(root, config_path)
    lowered = lower(config, check_shapes=not checked)
    chosen = providers or config.lint_providers or PROVIDERS
    return lint_lowered(config, lowered, chosen, gemini_subset=(gemini or config.gemini_schema) == "openapi")


def payload_sources(paths: Iterable[str | Path], *, root: str | Path = ".", kind: str | None = None) -> list[Source]:
    """Files to validate: `-` is stdin, a folder means every .json/.jsonl/.ndjson file under it (sorted), and its
    recorded streams (.sse, .eventstream) too when `kind` is a provider response (`<wire>.response`); each may
    also be gzip-compressed (`.jsonl.gz`)."""
    from toolgen.payloads.validation.sources import payload_sources as found_sources

    return found_sources(paths, root=root, kind=kind)


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
    from toolgen.payloads.validation.local import validate_sources

    # A config the package's manifest records needs no shape check again (nor jsonschema, to run it).
    root_path, given = Path(root).resolve(), Path(config_path).resolve() if config_path else None
    known = recorded_config(root_path, given)
    config = known[0] if known is not None else load_config(root_path, given)
    sources = payload_sources(paths, root=config.root, kind=kind)
    return validate_sources(
        sources,
        kind,
        config.output_dir,
        config.package,
        workers=workers,
        progress=progress,
        tally=tally,
        cache_dir=config.root / CACHE_DIR,
    )


def breaking(against: str, *, root: str | Path = ".", config_path: str | Path | None = None) -> tuple[Diagnostic, ...]:
    """Every change of the tools since `against`: breaking ones as errors, safe ones as warnings (breaking_rules.RULES).

    `against` is a file written by `breaking_snapshot`, the project directory of another checkout, or a git
    revision of the repository the project is in (its tree is unpacked into a temporary directory). Findings are
    placed in the current files; a removed tool where it was, as `AGAINST:path`. Raises InvalidInputError when
    `against` is none of these (rule against-ref) or its tools do not load.
    """
    from toolgen.ir.lower import lower
    from toolgen.policy.breaking.snapshots import load_snapshot, snapshot
    from toolgen.policy.breaking.tools import breaking_changes

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
    from toolgen.ir.lower import lower
    from toolgen.policy.breaking.snapshots import dump_snapshot, snapshot

    return dump_snapshot(snapshot(lower(_config(root, config_path))))


def _against_error(against: str, problem: str) -> InvalidInputError:
    return InvalidInputError([Diagnostic("--against", 1, 1, Severity.ERROR, "against-ref", f"{against!r} {problem}")])


def _tools_in(old_root: Path, config: Config, against: str) -> tuple[ToolSnapshot, ...]:
    """The tools of the project at `old_root`, read with its own toolgen.yaml; its errors are labeled `AGAINST:`."""
    from dataclasses import replace

    from toolgen.ir.lower import lower
    from toolgen.policy.breaking.snapshots import snapshot

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
