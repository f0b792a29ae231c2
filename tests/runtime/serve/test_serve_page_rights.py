"""The page in a real headless Chromium shows each credential only what its rights allow, and says a run's error."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.local_http import Answer, LocalServer, Received
from support.projects import SOURCE_PACKAGE
from support.serve_helpers import LIST_FILES, Server, awaiting

from test_serve_page import ARGS, CHROMIUM, WAIT, Tab, expect, sync_api

pytestmark = pytest.mark.browser

TOKENS = {
    "all": "page-all-token-0123456789ab",
    "read": "page-read-token-0123456789a",
    "decide": "page-decide-token-01234567",
}
TOKENS_FILE = f"{TOKENS['all']}\n{TOKENS['read']} read reader\n{TOKENS['decide']} read,decide decider\n"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield launched
        finally:
            launched.close()


def _open(browser: Any, server: Server, token: str, run_id: str) -> tuple[Any, Tab]:
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    tab = Tab(context.new_page(), server)
    tab.watch(tab.page)
    tab.page.goto(f"{server.url}/#token={token}&run={run_id}")
    expect(tab.page.locator("#served")).to_have_text("Offline demo", timeout=WAIT)
    return context, tab


def test_each_credential_sees_only_the_controls_its_rights_allow(
    browser: Any, source_build: Path, tmp_path: Path
) -> None:
    (tmp_path / "tokens").write_text(TOKENS_FILE, encoding="utf-8")
    env = {"PYTHONPATH": f"{source_build}{os.pathsep}{tmp_path}"}
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    server = Server(
        tmp_path, "--database", database, "--tokens", str(tmp_path / "tokens"), env=env, package=SOURCE_PACKAGE
    )
    server.client.headers["Authorization"] = f"Bearer {TOKENS['all']}"
    server.start()
    try:
        run_id = server.start_run(LIST_FILES)
        server.wait_for(run_id, awaiting)

        context, tab = _open(browser, server, TOKENS["read"], run_id)
        try:
            page = tab.page
            card = page.locator(".tool[data-status=awaiting]")
            card.wait_for(timeout=WAIT)
            expect(page.locator("#about-rights")).to_have_text("You may: read")
            # Reading only: no way to start a run, decide the call or stop the run.
            assert page.locator("#prompt").is_disabled() and page.locator("#send").is_disabled()
            assert page.locator("#prompt").get_attribute("placeholder") == "Your token may read runs, not start them"
            assert card.locator(".approve").count() == 0 and card.locator(".deny").count() == 0
            assert card.locator(".decide .note").inner_text() == "Your token may not decide: someone who may will."
            assert page.locator("#stop").is_hidden()
            page.screenshot(path=tmp_path / "reader.png", full_page=True)
            assert (tab.dialogs, tab.foreign, tab.errors) == ([], [], [])
        finally:
            context.close()

        context, tab = _open(browser, server, TOKENS["decide"], run_id)
        try:
            page = tab.page
            card = page.locator(".tool[data-status=awaiting]")
            card.wait_for(timeout=WAIT)
            expect(page.locator("#about-rights")).to_have_text("You may: read, decide")
            # Deciding, but not starting or stopping: the buttons to decide are there, and they work.
            assert page.locator("#prompt").is_disabled() and page.locator("#stop").is_hidden()
            card.locator(".approve").click()
            tab.finished()
            expect(page.locator(".tool")).to_have_attribute("data-status", "ok")
            assert server.state(run_id)["status"] == "finished"
            assert (tab.dialogs, tab.foreign, tab.errors) == ([], [], [])
        finally:
            context.close()
    finally:
        server.stop()


def _refusing(request: Received) -> Answer:
    """An OpenAI-compatible endpoint that refuses every request, as it does a bad model name (not retried)."""
    body = {"error": {"message": "The model `nope` does not exist", "type": "invalid_request_error", "code": None}}
    return Answer(json.dumps(body).encode(), status=404, content_type="application/json")


def test_a_run_that_fails_says_error_and_the_providers_words(browser: Any, source_build: Path, tmp_path: Path) -> None:
    endpoint = LocalServer(_refusing)
    env = {"PYTHONPATH": f"{source_build}{os.pathsep}{tmp_path}", "PAGE_TEST_KEY": "not-a-real-key"}
    options = ("--base-url", endpoint.base + "/v1", "--model", "nope", "--api-key-env", "PAGE_TEST_KEY")
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    server = Server(tmp_path, "--database", database, *options, env=env, package=SOURCE_PACKAGE).start()
    context = browser.new_context(viewport={"width": 1100, "height": 700})
    try:
        tab = Tab(context.new_page(), server)
        page = tab.watch(tab.page)
        tab.open(served="nope")
        page.fill("#prompt", "say hello")
        page.click("#send")
        status = page.locator("#run-status")
        expect(status).to_have_text(_starts_with("Error: "), timeout=WAIT)
        assert "does not exist" in status.inner_text(), status.inner_text()
        # Said once, though the call's error and the run's come as two events; the step's line says it failed.
        problem = page.locator(".turn div.problem:not(.step-line)")
        expect(problem).to_have_count(1, timeout=WAIT)
        assert problem.inner_text() == "Error: The model `nope` does not exist"
        assert page.locator(".step-line").inner_text().endswith(" · failed")
        # The form is usable again: a failed run does not leave the page stuck.
        assert page.locator("#prompt").is_enabled()
        page.screenshot(path=tmp_path / "error.png", full_page=True)
        assert (tab.dialogs, tab.foreign, tab.errors) == ([], [], [])
    finally:
        context.close()
        server.stop()
        endpoint.close()


def _starts_with(prefix: str) -> Any:
    import re

    return re.compile("^" + re.escape(prefix))
