"""The service's page in a real headless Chromium: a run streams in, waits for approval, survives a reload."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from serve_helpers import LIST_FILES, required, serving

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the test extra)")
if not os.path.exists(CHROMIUM):
    required("browser", "Debian's chromium is not installed (apt-get install chromium; .ci/run does)")

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Where the README's screenshot comes from: TOOLGEN_SCREENSHOT=docs/serve-page.png when refreshing it.
SCREENSHOT = os.environ.get("TOOLGEN_SCREENSHOT")


def test_the_page_drives_a_run_with_an_approval_end_to_end_and_a_reload_loses_nothing(tmp_path: Path) -> None:
    with (
        serving(tmp_path, "--database", f"sqlite:///{tmp_path / 'runs.sqlite'}") as server,
        sync_api.sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1000, "height": 760})
            page.goto(server.url + "/")
            page.fill("#prompt", LIST_FILES)
            page.click("#send")
            card = page.locator(".tool[data-status=awaiting]")
            card.wait_for(timeout=30_000)
            assert card.locator(".name").inner_text() == "run_command"
            assert '"program": "ls"' in card.locator(".arguments").inner_text()
            assert page.locator("#run-status").inner_text() == "awaiting approval"
            assert page.locator("#send").is_disabled()
            run_id = page.evaluate("location.hash").split("=", 1)[1]
            assert server.state(run_id)["status"] == "awaiting_approval"

            page.reload()
            card = page.locator(".tool[data-status=awaiting]")
            card.wait_for(timeout=30_000)
            assert page.locator(".msg.user").inner_text() == LIST_FILES
            assert page.locator(".tool").count() == 1
            card.locator(".approve").click()

            page.locator(".tool[data-status=ok]").wait_for(timeout=30_000)
            page.wait_for_function(
                "document.getElementById('run-status').textContent === 'finished: finished'", timeout=30_000
            )
            done = page.locator(".tool")
            assert done.count() == 1
            assert "notes.txt" in done.locator(".result").inner_text()
            assert done.locator(".duration").inner_text().endswith(" ms")
            assert "Offline demo" in page.locator(".msg.assistant").last.inner_text()
            assert server.state(run_id)["status"] == "finished"

            # The same conversation goes on; this time the call is denied with a reason the model reads.
            page.fill("#prompt", "now list the files in the workspace again")
            page.click("#send")
            page.wait_for_function(f"!location.hash.endsWith('{run_id}')", timeout=30_000)
            card = page.locator(".tool[data-status=awaiting]")
            card.wait_for(timeout=30_000)
            card.locator(".reason").fill("not now")
            card.locator(".deny").click()
            page.locator(".tool[data-status=denied]").wait_for(timeout=30_000)
            page.wait_for_function(
                "document.getElementById('run-status').textContent.startsWith('finished')", timeout=30_000
            )
            assert "not now" in page.locator(".tool[data-status=denied] .result").inner_text()
            second = page.evaluate("location.hash").split("=", 1)[1]
            state = server.state(second)
            assert state["conversation_id"] == server.state(run_id)["conversation_id"]
            assert [m["role"] for m in state["messages"]][:2] == ["user", "assistant"]
            if SCREENSHOT:
                page.screenshot(path=SCREENSHOT, full_page=True)
        finally:
            browser.close()
