"""What a rendering `check` finds: the files toolgen would write against the package on disk, as a unified diff."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from toolgen.core.diagnostics import Diagnostic, has_errors
from toolgen.output.write import foreign_entries, foreign_findings, package_entries, stale_package_findings
from toolgen.project.config import Config, display_path
from toolgen.project.input_digests import as_recorded
from toolgen.project.manifest import (
    MANIFEST_NAME,
    config_record,
    read_manifest,
    recorded_makers,
    recorded_versions,
    render_manifest,
    version_changes,
    version_findings,
)


@dataclass(frozen=True)
class CheckResult:
    package_dir: Path
    changed: tuple[str, ...]
    diff: str
    warnings: tuple[Diagnostic, ...]
    """The build's warnings and check's own findings: files toolgen did not write outside the user zone and a
    stale old package are errors; a package made by other versions of toolgen or its generators is a warning."""
    built: bool = True
    """False before the first build: no package, nothing compared; `changed` names the package folder."""

    @property
    def ok(self) -> bool:
        return not self.changed and not has_errors(self.warnings)


def on_disk(package_dir: Path, zone: Iterable[str] = ()) -> dict[str, str]:
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


def not_built(config: Config, old_package: Path | None) -> CheckResult | None:
    """The answer before the first build (no manifest, no file of the package, no package of an earlier name to
    report as stale): "build first", not a diff of every file it would write. None once there is a package."""
    if old_package is not None or read_manifest(config.package_dir) is not None:
        return None
    if on_disk(config.package_dir, config.user_zone):
        return None
    shown = f"{display_path(config.root, config.package_dir)}/"
    return CheckResult(config.package_dir, (shown,), "", (), built=False)


def compare(
    config: Config,
    expected: dict[str, str],
    inputs: Mapping[str, str],
    warnings: tuple[Diagnostic, ...],
    old_package: Path | None,
    beside: Mapping[str, str],
) -> CheckResult:
    """The rendered files (`expected`, the manifest included) against the package on disk.

    The user zone is ignored; files toolgen did not write elsewhere in the package, and `old_package` (a package
    an earlier build wrote under another name), are error findings; other generator versions only a warning.
    `beside` are the files the build writes in the output folder next to the package (toolgen.output.beside).
    """
    from toolgen.output.beside import beside_findings, beside_pairs, plan_beside
    from toolgen.output.building import leftover_findings

    foreign = foreign_entries(config.package_dir, expected, config.user_zone)
    actual = on_disk(config.package_dir, config.user_zone)
    manifest = read_manifest(config.package_dir)
    recorded = recorded_versions(manifest)
    versions = version_changes(recorded) if recorded is not None else []
    makers = recorded_makers(manifest)
    # Nor how an older toolgen hashed an input that has not changed (its text rather than its data).
    inputs = as_recorded(config.root, inputs, (manifest or {}).get("inputs"))
    if makers is not None:  # what made the package is no drift: compare the manifest as its makers would render it
        generated = {name: text for name, text in expected.items() if name != MANIFEST_NAME}
        record = config_record(config)
        expected[MANIFEST_NAME] = render_manifest(
            generated, inputs, config=record, warnings=warnings, makers=makers, beside=beside
        )
    prefix = display_path(config.root, config.package_dir)
    plan = plan_beside(config, beside)
    compared = [
        (f"{prefix}/{name}", expected.get(name), actual.get(name))
        for name in sorted((expected.keys() | actual.keys()) - set(foreign))
    ]
    changed: list[str] = []
    chunks: list[str] = []
    for shown, want, have in [*compared, *beside_pairs(config, plan)]:
        if want == have:
            continue
        changed.append(shown)
        fromfile = f"a/{shown}" if have is not None else "/dev/null"
        tofile = f"b/{shown}" if want is not None else "/dev/null"
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
        *leftover_findings(config, config.package_dir),
        *foreign_findings(config, foreign),
        *beside_findings(config, plan.foreign),
        *stale_package_findings(config, old_package),
        *version_findings(prefix, versions, len(changed)),
    ]
    return CheckResult(config.package_dir, tuple(changed), diff, (*warnings, *findings))
