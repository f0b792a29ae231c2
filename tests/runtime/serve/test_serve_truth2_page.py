"""The page in a real headless Chromium signs in with the valid token after a flood of wrong ones from its address,
and tells a wrong token past the limit to wait."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.projects import SOURCE_PACKAGE
from support.serve_helpers import Server

from test_serve_page import ARGS, CHROMIUM, WAIT, Tab, expect, sync_api

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield launched
        finally:
            launched.close()


def test_after_a_flood_of_wrong_tokens_the_page_signs_in_with_the_valid_one(
    browser: Any, source_build: Path, tmp_path: Path
) -> None:
    env = {"PYTHONPATH": f"{source_build}{os.pathsep}{tmp_path}"}
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    server = Server(tmp_path, "--database", database, env=env, package=SOURCE_PACKAGE).start()
    context = browser.new_context()
    try:
        # Another process of the same machine, guessing: every local process shares the page's address.
        for _ in range(11):
            httpx.post(server.url + "/session", json={"token": "wrong-token-0123456789"})
        tab = Tab(context.new_page(), server)
        page = tab.watch(tab.page)
        page.goto(server.url + "/")
        field = page.get_by_label("Access token")
        field.fill("still-not-the-token-0123")
        page.get_by_role("button", name="Sign in").click()
        expect(page.locator("#login-note")).to_have_text(
            "Too many attempts: wait a minute, then try again.", timeout=WAIT
        )
        field.fill(server.token)
        page.get_by_role("button", name="Sign in").click()
        expect(page.locator("#login")).to_be_hidden(timeout=WAIT)
        expect(page.locator("#served")).to_have_text("Offline demo", timeout=WAIT)
        assert (tab.dialogs, tab.foreign, tab.errors) == ([], [], [])
    finally:
        context.close()
        server.stop()
