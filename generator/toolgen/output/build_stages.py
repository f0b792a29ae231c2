"""The build as a named sequence of stages: lower, lint, render, start the check, manifest, commit, remember."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from toolgen.core.diagnostics import Diagnostic, Severity
from toolgen.core.errors import ForeignFilesError, InterruptedAfterCommit, InvalidInputError
from toolgen.output.build_cache import (
    INPUTS_CHANGED,
    cached_warnings,
    format_cache_path,
    last_build_difference,
    models_cache_path,
    old_package,
    remember_build,
)
from toolgen.project.config import CACHE_DIR, CONFIG_NAME, Config, keep_conflicts
from toolgen.project.manifest import MANIFEST_NAME, config_record, read_manifest, render_manifest

if TYPE_CHECKING:
    from toolgen.codegen.format import FormatCache
    from toolgen.codegen.model_cache import ModelsCache
    from toolgen.ir.lower import Lowered
    from toolgen.output.beside import BesidePlan
    from toolgen.output.drift import CheckResult
    from toolgen.output.sdk_check import Checker, Verdict


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
    edited: tuple[str, ...] = ()
    """Files of `changed` or `deleted` that had been edited by hand since the build that wrote them: this build
    replaced (or deleted) the edit."""


@dataclass(frozen=True)
class Rendered:
    """What the schemas produce: the package's files (without its manifest) and the files beside it."""

    files: dict[str, str]
    manifest: str
    inputs: dict[str, str]
    warnings: tuple[Diagnostic, ...]
    """The front end's warnings, recorded in the manifest."""
    linted: tuple[Diagnostic, ...]
    """The targeted providers' lint warnings: printed and cached, not recorded in the manifest."""
    beside: dict[str, str]

    @property
    def package(self) -> dict[str, str]:
        """Every file of the package, its manifest included (last)."""
        return {**self.files, MANIFEST_NAME: self.manifest}


@dataclass
class CommitPoint:
    """Whether the build has passed its commit point: a Ctrl-C after it must not say that nothing was written."""

    passed: bool = False


# The targeted providers' lint (policy/build_lint.py, a layer above this one, so the API passes it in): an
# error raises LintFailedError, the warnings return.
Lint = Callable[[Config, "Lowered"], Iterable[Diagnostic]]


def quiet(stage: str) -> None:
    """The default progress callback: libraries say nothing."""


def build_project(
    config: Config, config_path: str | Path | None, *, force: bool, progress: Callable[[str], None], lint: Lint
) -> BuildResult:
    """`toolgen build` for a loaded config: one build at a time, the file system's refusals named."""
    from toolgen.output.building import build_lock, environment_errors

    point = CommitPoint()
    with interrupted_after(point), environment_errors(config.root), build_lock(config.root) as refused:
        return run_build(config, config_path, force, progress, lint, refused, point)


@contextlib.contextmanager
def interrupted_after(point: CommitPoint) -> Iterator[None]:
    """Ctrl-C once the build has committed is InterruptedAfterCommit: the package is written in full, and the
    message must not say that nothing was."""
    try:
        yield
    except KeyboardInterrupt as interrupt:
        if point.passed and not isinstance(interrupt, InterruptedAfterCommit):
            raise InterruptedAfterCommit from None
        raise


def run_build(
    config: Config,
    config_path: str | Path | None,
    force: bool,
    progress: Callable[[str], None],
    lint: Lint,
    refused: OSError | None,
    point: CommitPoint,
) -> BuildResult:
    """The stages in order; `refused` is why the scratch folder cannot be written (a read-only checkout)."""
    from toolgen.codegen.format import FormatCache
    from toolgen.codegen.model_cache import ModelsCache
    from toolgen.output.beside import plan_beside
    from toolgen.output.building import commit_build
    from toolgen.output.sdk_check import started_checker

    previous = recover_packages(config)
    config_text = (Path(config_path) if config_path else config.root / CONFIG_NAME).read_text(encoding="utf-8")
    difference = None if force else last_build_difference(config, config_text)
    if not force and difference is None:
        return up_to_date(config)
    # The check's interpreter starts now and imports pydantic while the package renders: always after an edit
    # of the inputs (a package no check has seen, most likely), else when no package passed here yet.
    bytecode = config.root / CACHE_DIR / "bytecode"
    prestart = True if difference == INPUTS_CHANGED else None
    with started_checker(bytecode, prestart) if refused is None else contextlib.nullcontext() as checker:
        format_cache = None if refused is not None else FormatCache(format_cache_path(config))
        models_cache = None if refused is not None else ModelsCache(models_cache_path(config))
        lowered = lower_project(config, progress)
        linted = tuple(lint(config, lowered))
        scratch = None if refused is not None else config.root / CACHE_DIR
        files, beside = render_files(config, lowered, progress, format_cache, models_cache, scratch)
        started = start_check(config, checker, files, beside, previous)
        rendered = with_manifest(config, lowered, files, beside, linted)
        warnings = (*rendered.warnings, *rendered.linted)
        plan = started[0] if started is not None else plan_beside(config, beside)
        if refused is not None:  # a read-only checkout, without the cache: up to date when the files are
            if on_disk_already(config, rendered, plan):
                return BuildResult(config.package_dir, _names(files), False, warnings)
            raise refused
        refuse_foreign_beside(config, plan)
        progress("checking and writing")
        # A forced build rewrites every file; another moves in only those whose bytes differ.
        verdict = started[1] if started is not None else None
        written = commit_build(
            config, files, rendered.manifest, previous, plan, verdict, force, foreign_refused=started is not None
        )
        point.passed = True
    if format_cache is not None:
        format_cache.save()
    if models_cache is not None:
        models_cache.save()
    remember_build(config, config_text, rendered.inputs, rendered.manifest, warnings)
    return BuildResult(
        config.package_dir, _names(files), True, warnings, written.changed, written.deleted, written.edited
    )


def recover_packages(config: Config) -> Path | None:
    """Finish or clear what a build killed earlier left (past its commit point or not), here and where the
    package was before `package:` or `output:` moved it; returns that old place."""
    from toolgen.output.building import recover_package

    recover_package(config, config.package_dir)
    previous = old_package(config)
    if previous is not None:
        recover_package(config, previous)
    return previous


def up_to_date(config: Config) -> BuildResult:
    """The answer of a build with nothing to do: the files the manifest lists, the warnings cached."""
    recorded = read_manifest(config.package_dir) or {}
    return BuildResult(config.package_dir, _names(recorded.get("files", {})), False, cached_warnings(config))


def lower_project(config: Config, progress: Callable[[str], None] = quiet) -> Lowered:
    """The front end: schemas loaded, checked and lowered to the IR."""
    # The renderer loads before the first stage is named: a Ctrl-C while it loads leaves no stage line behind.
    import toolgen.codegen.render  # noqa: F401
    import toolgen.codegen.targets.installable  # noqa: F401
    from toolgen.ir.lower import lower
    from toolgen.source.load import MAX_DEPTH

    progress("checking schemas")
    try:
        return lower(config)
    except RecursionError:
        message = f"a schema nests deeper than toolgen follows ({MAX_DEPTH} levels); flatten it with $defs and $ref"
        raise InvalidInputError([Diagnostic(config.display, 1, 1, Severity.ERROR, "too-deep", message)]) from None


def render_files(
    config: Config,
    lowered: Lowered,
    progress: Callable[[str], None],
    format_cache: FormatCache | None,
    models_cache: ModelsCache | None = None,
    scratch: Path | None = None,
) -> tuple[dict[str, str], dict[str, str]]:
    """The package's files, formatted (`format_cache` keeps what ruff made of each, `models_cache` the models
    modules of the last build, `scratch` what the templates stage keeps), and the files beside it."""
    from toolgen.codegen.render import render
    from toolgen.codegen.targets.installable import beside_files

    progress(f"generating models for {len(lowered.project.tools)} tools")
    files = render(lowered.project, config, format_cache, models_cache, scratch)
    return files, beside_files(config, lowered.project)


def start_check(
    config: Config,
    checker: Checker | None,
    files: Mapping[str, str],
    beside: Mapping[str, str],
    previous: Path | None,
) -> tuple[BesidePlan, Verdict] | None:
    """Start importing the files as rendered while the build hashes, plans and stages them; its verdict is
    awaited before the commit point, and it is stopped if the build fails before then. None without a checker."""
    if checker is None:
        return None
    from toolgen.output.beside import plan_beside
    from toolgen.output.building import work_dir
    from toolgen.output.write import refuse_foreign

    # A build refused for files toolgen did not write leaves everything as it was, the check's compiled
    # modules in the cache included: so it is refused before the check compiles anything.
    plan = plan_beside(config, beside)
    refuse_foreign_beside(config, plan)
    refuse_foreign(config, files, previous)
    return plan, checker.start(work_dir(config, config.package_dir) / "checked", config.package, files)


def with_manifest(
    config: Config,
    lowered: Lowered,
    files: dict[str, str],
    beside: dict[str, str],
    linted: tuple[Diagnostic, ...] = (),
) -> Rendered:
    """The manifest that hashes the files, once none of them is a file toolgen.yaml says to keep."""
    manifest = render_manifest(
        files, lowered.inputs, config=config_record(config), warnings=lowered.warnings, beside=beside
    )
    conflicts = keep_conflicts(config, {**files, MANIFEST_NAME: manifest})
    if conflicts:
        raise InvalidInputError(conflicts)
    return Rendered(files, manifest, lowered.inputs, lowered.warnings, linted, beside)


def render_all(
    config: Config,
    lint: Lint | None = None,
    progress: Callable[[str], None] = quiet,
    format_cache: FormatCache | None = None,
    models_cache: ModelsCache | None = None,
) -> Rendered:
    """Every stage up to the manifest, in memory (what `check` compares with the disk); `lint` too, when given."""
    lowered = lower_project(config, progress)
    linted = tuple(lint(config, lowered)) if lint is not None else ()
    files, beside = render_files(config, lowered, progress, format_cache, models_cache)
    return with_manifest(config, lowered, files, beside, linted)


def on_disk_already(config: Config, rendered: Rendered, plan: BesidePlan) -> bool:
    """Whether the package and the files beside it on disk are what was rendered (a read-only checkout)."""
    from toolgen.output.beside import on_disk as beside_on_disk
    from toolgen.output.drift import on_disk

    if on_disk(config.package_dir, config.user_zone) != rendered.package:
        return False
    return not (plan.delete or plan.foreign or beside_on_disk(config, set(rendered.beside)) != rendered.beside)


def refuse_foreign_beside(config: Config, plan: BesidePlan) -> None:
    """Stop the build when a file beside the package that it would overwrite is not one toolgen wrote."""
    from toolgen.output.beside import beside_findings

    if plan.foreign:
        raise ForeignFilesError(
            beside_findings(config, plan.foreign), "the output folder holds files toolgen did not write"
        )


def _names(files: Mapping[str, object]) -> tuple[str, ...]:
    return tuple(sorted([*files, MANIFEST_NAME]))


def check_project(config: Config, *, full: bool, progress: Callable[[str], None], lint: Lint) -> CheckResult:
    """`check` once the manifest could not answer alone: everything rendered in memory and compared with the disk.

    Without `full`, ruff formats only the files the last build's format cache does not hold, and the models come
    from the last build's models cache when its key matches; the caches are read, never written (check changes
    nothing on disk), and `full` trusts no record of an earlier run, this one included.
    """
    from toolgen.codegen.format import FormatCache
    from toolgen.codegen.model_cache import ModelsCache
    from toolgen.output.drift import compare, not_built

    unbuilt = not_built(config, old_package(config))
    if unbuilt is not None:  # "build first", once the front end and the lint find the input fine (as build would)
        from toolgen.ir.lower import lower

        lint(config, lower(config))
        return unbuilt
    formatted = None if full else FormatCache(format_cache_path(config))
    models = None if full else ModelsCache(models_cache_path(config))
    rendered = render_all(config, lint, progress, formatted, models)
    return compare(config, rendered.package, rendered.inputs, rendered.warnings, old_package(config), rendered.beside)
