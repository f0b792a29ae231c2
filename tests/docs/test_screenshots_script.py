"""docs/scripts/screenshots.py still gets from the real program what its images show: the annotations of a drifted
project, a traced run's spans, and (with Chromium) the page awaiting an approval, as a small PNG."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType

import pytest
from support.projects import REPO_ROOT

SCRIPT = REPO_ROOT / "docs" / "scripts" / "screenshots.py"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_screenshots", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


screenshots = _script()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The script's project, built once for the module (the drift is made on a copy)."""
    built: Path = screenshots.built_project(tmp_path_factory.mktemp("screenshots") / "shop")
    return built


def test_annotations_are_read_as_github_reads_them() -> None:
    output = (
        "toolgen: checking schemas...\n"
        "::error file=schemas/tools/a%2Cb.yaml,line=22,col=29,title=nonstandard-type::type 'numbr'%0Ais not%25 a type\n"
        "::warning file=generated/x.py,title=toolgen-drift::differs\n"
    )
    found = screenshots.github_annotations(output)
    assert found == [
        {
            "level": "error",
            "message": "type 'numbr'\nis not% a type",
            "file": "schemas/tools/a,b.yaml",
            "line": "22",
            "col": "29",
            "title": "nonstandard-type",
        },
        {"level": "warning", "message": "differs", "file": "generated/x.py", "title": "toolgen-drift"},
    ]


def test_a_schema_changed_after_the_build_fails_check_with_a_drift_annotation_per_file(project: Path) -> None:
    output = screenshots.drifted_check(project)
    found = screenshots.github_annotations(output)
    assert {item["title"] for item in found} == {"toolgen-drift"}
    assert "generated/toolgen_sdk/tools.py" in {item["file"] for item in found}
    page = screenshots.annotation_page(found, output)
    assert page.count('class="item"') == len(found) and f"{len(found)} errors" in page


def test_the_traced_run_prints_a_span_per_model_call_and_tool_call_then_the_run(project: Path) -> None:
    spans = [json.loads(span) for span in screenshots.spans_of(screenshots.trace_text(project))]
    assert [span["name"] for span in spans] == [
        "chat scripted",
        "execute_tool get_current_weather",
        "chat scripted",
        "invoke_agent weather",
    ]
    run = spans[-1]["context"]["span_id"]
    assert all(span["parent_id"] == run for span in spans[:-1])


@pytest.mark.browser
def test_the_page_awaiting_approval_is_a_small_png(tmp_path: Path) -> None:
    try:
        screenshots.require_browser()
    except screenshots.ScreenshotError as error:
        if os.environ.get("TOOLGEN_REQUIRE_BROWSER"):
            pytest.fail(f"{error}, and TOOLGEN_REQUIRE_BROWSER is set", pytrace=False)
        pytest.skip(str(error))
    pytest.importorskip("dbos", reason="the serve extra (dbos) is not installed")
    assert screenshots.main(["--out", str(tmp_path), "--only", "serve"]) == 0
    image = (tmp_path / "serve-approval.png").read_bytes()
    assert image.startswith(PNG_SIGNATURE)
    width = int.from_bytes(image[16:20], "big")  # the IHDR chunk's first field
    assert width == screenshots.WIDTH
    assert len(image) < 200_000
