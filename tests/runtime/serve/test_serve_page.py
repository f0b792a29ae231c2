"""The service's page in a real headless Chromium, against a real server built from this checkout's runtime: signing
in, runs that stream in, wait for approval and survive a reload, conversations that keep every turn, a stale tab, the
run list, results that failed, markdown that stays text, and what the idle page says it serves."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.local_http import Answer, LocalServer, Received
from support.projects import SOURCE_PACKAGE
from support.serve_helpers import LIST_FILES, Server, over, required

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the test extra)")
if not os.path.exists(CHROMIUM):
    required("browser", "Debian's chromium is not installed (apt-get install chromium; .ci/run does)")
expect = sync_api.expect

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
# A screenshot of the page when TOOLGEN_SCREENSHOT names a file (the site's images: docs/scripts/screenshots.py).
SCREENSHOT = os.environ.get("TOOLGEN_SCREENSHOT")
WAIT = 30_000  # ms: how long a browser wait may last before the test fails
RED = "rgb(197, 48, 48)"

# A file the offline model's answer quotes when run_command cats it: markdown, and markup that must stay text.
ANSWER_MD = """\
here it comes
## A heading
Some **bold** and *italic* and `code`, a [safe link](https://example.org/docs) and a [bad one](javascript:alert(1)).
<img src="http://evil.example/x.png" onerror="alert(1)">
<script>alert(2)</script>
[data](data:text/html,<script>alert(3)</script>) and a bare https://example.com/bare.

- first item
- second item

1. one
2. two

```python
print("<b>not bold</b>")
```
"""
# Hostile inputs for the page's renderer itself: long runs of unmatched markers, deep nesting, a megabyte of text.
HOSTILE = [
    "*" * 1_000_000,
    "[" * 190_000 + "](https://example.org)",
    "**a" * 63_000,
    "> " * 95_000 + "x",
    "  - " * 47_000 + "x",
    "http://" + "." * 190_000 + "a",
    "# " + " #" * 95_000 + "x",
    "```" + " " * 190_000 + "!",
    "[**[*[" * 31_000 + "](https://example.org)",
    "[a](javascript:alert(1))" * 7_900,
    "<img src=x onerror=alert(1)>" * 6_000,
    "x" * 1_000_000,
]


@dataclass
class Tab:
    """A page in its own browser context (its own cookies), and what it did that it must never do."""

    page: Any
    server: Server
    dialogs: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def watch(self, page: Any) -> Any:
        page.on("dialog", self._dialog)
        page.on("request", lambda request: self._request(request.url))
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("console", lambda message: self._console(message.text))
        return page

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _request(self, url: str) -> None:
        if not url.startswith(self.server.url + "/"):
            self.foreign.append(url)

    def _console(self, text: str) -> None:
        if "Content Security Policy" in text:
            self.errors.append(text)

    def open(self, fragment: str = "", served: str = "Offline demo") -> Any:
        """The page, signed in with the server's token from the address (`#token=...`), at `#fragment`."""
        answer = self.page.goto(f"{self.server.url}/#token={self.server.token}" + (f"&{fragment}" if fragment else ""))
        expect(self.page.locator("#served")).to_have_text(served, timeout=WAIT)
        return answer

    def hash_run(self) -> str:
        found = re.search(r"run=([A-Za-z0-9_-]+)", str(self.page.evaluate("location.hash")))
        assert found, self.page.evaluate("location.hash")
        return found.group(1)

    def finished(self, label: str = "Finished") -> None:
        expect(self.page.locator("#run-status")).to_have_text(label, timeout=WAIT)

    def ask(self, prompt: str) -> Any:
        """Send `prompt`; the new turn's card once it awaits approval."""
        turns = self.page.locator(".turn").count()
        self.page.fill("#prompt", prompt)
        self.page.click("#send")
        expect(self.page.locator(".turn")).to_have_count(turns + 1, timeout=WAIT)
        card = self.page.locator(".turn").last.locator(".tool").last
        expect(card).to_have_attribute("data-status", "awaiting", timeout=WAIT)
        return card

    def edit(self, card: Any, arguments: dict[str, Any]) -> None:
        """Run the call with other arguments, through the collapsed editor and its label."""
        assert card.locator(".editor").is_hidden()
        card.get_by_role("button", name="Edit arguments").click()
        card.get_by_label("Arguments to run instead (JSON)").fill(json.dumps(arguments))
        card.get_by_role("button", name="Run with these arguments").click()


@pytest.fixture(scope="module")
def server(source_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for the module, serving the package built from this checkout's runtime, on its own workspace."""
    root = tmp_path_factory.mktemp("page")
    workspace = root / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("Files here are what run_command can see.\n", encoding="utf-8")
    (workspace / "answer.md").write_text(ANSWER_MD, encoding="utf-8")
    database = f"sqlite:///{root / 'runs.sqlite'}"
    env = {"PYTHONPATH": f"{source_build}{os.pathsep}{root}"}
    served = Server(root, "--database", database, "--workspace", str(workspace), env=env, package=SOURCE_PACKAGE)
    try:
        yield served.start()
    finally:
        served.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def tab(browser: Any, server: Server) -> Iterator[Tab]:
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    try:
        opened = Tab(context.new_page(), server)
        opened.watch(opened.page)
        yield opened
        # Whatever a test did, the page ran no code it was sent, fetched nothing elsewhere, and broke no rule.
        assert opened.dialogs == [], opened.dialogs
        assert opened.foreign == [], opened.foreign
        assert opened.errors == [], opened.errors
    finally:
        context.close()


def _texts(locator: Any) -> list[str]:
    return [text.strip() for text in locator.all_inner_texts()]


def test_the_page_drives_a_run_with_an_approval_end_to_end_and_a_reload_loses_nothing(tab: Tab, tmp_path: Path) -> None:
    page, server = tab.page, tab.server
    tab.open()
    card = tab.ask(LIST_FILES)
    assert card.locator(".name").inner_text() == "run_command"
    assert '"program": "ls"' in card.locator(".arguments").inner_text()
    expect(page.locator("#run-status")).to_have_text("Awaiting approval")
    assert page.locator("#send").is_disabled()
    run_id = tab.hash_run()
    assert server.state(run_id)["status"] == "awaiting_approval"
    page.screenshot(path=tmp_path / "awaiting.png", full_page=True)

    page.reload()
    card = page.locator(".tool[data-status=awaiting]")
    card.wait_for(timeout=WAIT)
    assert page.locator(".msg.user").inner_text() == LIST_FILES
    assert page.locator(".tool").count() == 1
    card.locator(".approve").click()

    tab.finished()
    done = page.locator(".tool")
    assert done.count() == 1
    expect(done).to_have_attribute("data-status", "ok")
    assert "notes.txt" in done.locator(".result").inner_text()
    assert done.locator(".duration").inner_text().endswith(" ms")
    assert done.locator(".decision").inner_text() == "Approved"
    assert "Offline demo" in page.locator(".msg.assistant").last.inner_text()
    # A line per model call under its step: the model that answered and how long it took.
    steps = _texts(page.locator(".step-line"))
    assert len(steps) == 2, steps
    assert all(re.fullmatch(r"scripted · [\d,]+ ms", step) for step in steps), steps
    assert server.state(run_id)["status"] == "finished"

    # The same conversation goes on below the first turn; this time the call is denied with a reason.
    card = tab.ask("now list the files in the workspace again")
    second = tab.hash_run()
    assert second != run_id
    card.locator(".reason").fill("not now")
    card.locator(".deny").click()
    tab.finished()
    assert "not now" in page.locator(".tool[data-status=denied] .result").inner_text()
    state = server.state(second)
    assert state["conversation_id"] == server.state(run_id)["conversation_id"]
    assert [m["role"] for m in state["messages"]][:2] == ["user", "assistant"]

    def both_turns() -> None:
        turns = page.locator(".turn")
        expect(turns).to_have_count(2)
        assert [turns.nth(i).get_attribute("data-run") for i in range(2)] == [run_id, second]
        assert _texts(page.locator(".msg.user")) == [LIST_FILES, "now list the files in the workspace again"]
        cards = page.locator(".tool")
        assert [cards.nth(i).get_attribute("data-status") for i in range(cards.count())] == ["ok", "denied"]
        assert "notes.txt" in turns.first.locator(".tool .result").inner_text()
        assert turns.nth(1).locator(".decision").inner_text() == "Denied: not now"

    both_turns()  # the first turn's cards are still there
    page.screenshot(path=tmp_path / "two-turns.png", full_page=True)
    page.reload()  # and a reload replays the conversation's runs, in order
    tab.finished()
    both_turns()
    if SCREENSHOT:
        page.screenshot(path=SCREENSHOT, full_page=True)


def test_the_idle_page_names_the_offline_demo_and_its_tools_and_signs_in_from_the_address(
    tab: Tab, tmp_path: Path
) -> None:
    page, server = tab.page, tab.server
    answer = tab.open()
    policy = answer.headers["content-security-policy"]
    assert "script-src 'self';" in policy and "frame-ancestors 'none'" in policy
    # The token went to /session and out of the address; the session is a cookie the script cannot read.
    assert "token" not in page.evaluate("location.href")
    cookies = page.context.cookies()
    assert cookies and all(cookie["httpOnly"] for cookie in cookies)
    assert page.evaluate("document.cookie") == ""

    expect(page.locator("#about")).to_be_visible()
    expect(page.locator("#about-model")).to_have_text("Offline demo: a scripted model answers, no LLM is called.")
    expect(page.locator("#run-status")).to_have_text("No run open")
    tools = httpx.get(server.url + "/info", headers=dict(server.client.headers)).json()["tools"]
    assert {t["name"] for t in tools} >= {"run_command", "get_current_weather"}
    items = page.locator("#tool-list li")
    expect(items).to_have_count(len(tools))
    assert [
        (items.nth(i).locator(".name").inner_text(), items.nth(i).locator(".description").inner_text())
        for i in range(len(tools))
    ] == [(t["name"], t["description"]) for t in tools]
    page.screenshot(path=tmp_path / "idle.png", full_page=True)


def test_without_a_session_the_page_asks_for_the_token_and_signs_in_with_it(tab: Tab, tmp_path: Path) -> None:
    page, server = tab.page, tab.server
    page.goto(server.url + "/")
    expect(page.locator("#login")).to_be_visible(timeout=WAIT)
    field = page.get_by_label("Access token")
    assert field.get_attribute("type") == "password"
    field.fill("not-the-token-of-this-server")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#login-note")).to_have_text("That token was not accepted.", timeout=WAIT)
    page.screenshot(path=tmp_path / "sign-in.png", full_page=True)
    field.fill(server.token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#login")).to_be_hidden(timeout=WAIT)
    expect(page.locator("#served")).to_have_text("Offline demo", timeout=WAIT)
    expect(page.locator("#tool-list li").first).to_be_visible()


def _chat_stream(request: Received) -> Answer:
    """An OpenAI-compatible endpoint's streamed answer, with the usage it reports last."""
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hello, **world**"}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 1024, "completion_tokens": 96, "total_tokens": 1120}},
    ]
    lines = [
        f"data: {json.dumps({'id': 'c1', 'object': 'chat.completion.chunk', 'model': 'qwen3', **c})}\n\n"
        for c in chunks
    ]
    return Answer("".join([*lines, "data: [DONE]\n\n"]).encode(), content_type="text/event-stream", chunk=64)


def test_with_a_model_endpoint_the_page_names_the_model_and_each_step_its_latency_and_tokens(
    browser: Any, source_build: Path, tmp_path: Path
) -> None:
    endpoint = LocalServer(_chat_stream)
    env = {"PYTHONPATH": f"{source_build}{os.pathsep}{tmp_path}", "PAGE_TEST_KEY": "not-a-real-key"}
    options = ("--base-url", endpoint.base + "/v1", "--model", "qwen3", "--api-key-env", "PAGE_TEST_KEY")
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    server = Server(tmp_path, "--database", database, *options, env=env, package=SOURCE_PACKAGE).start()
    context = browser.new_context(viewport={"width": 1100, "height": 700})
    try:
        tab = Tab(context.new_page(), server)
        page = tab.watch(tab.page)
        tab.open(served="qwen3")
        expect(page.locator("#about-model")).to_have_text("Model: qwen3 (openai-chat)")
        page.fill("#prompt", "say hello")
        page.click("#send")
        tab.finished()
        answer = page.locator(".msg.assistant")
        expect(answer).to_have_text("Hello, world")
        assert _texts(answer.locator("strong")) == ["world"]
        step = page.locator(".step-line")
        expect(step).to_have_count(1)
        assert re.fullmatch(r"qwen3 · [\d,]+ ms · 1,024 in / 96 out", step.inner_text()), step.inner_text()
        assert len(endpoint.seen) == 1
        page.screenshot(path=tmp_path / "model-step.png", full_page=True)
        assert (tab.dialogs, tab.foreign, tab.errors) == ([], [], [])
    finally:
        context.close()
        server.stop()
        endpoint.close()


def test_a_command_that_exits_1_is_shown_red_with_its_exit_code(tab: Tab, tmp_path: Path) -> None:
    page = tab.page
    tab.open()
    card = tab.ask(LIST_FILES)
    tab.edit(card, {"program": "grep", "args": ["no such words", "notes.txt"]})
    tab.finished()
    expect(card).to_have_attribute("data-status", "error")
    assert card.locator(".status").inner_text() == "exit code 1"
    assert card.locator(".decision").inner_text() == "Approved with edited arguments"
    assert '"exit_code": 1' in card.locator(".result").inner_text()
    for part in (card, card.locator(".status")):
        style = part.evaluate("node => [getComputedStyle(node).borderLeftColor, getComputedStyle(node).color]")
        assert RED in style, style
    page.screenshot(path=tmp_path / "exit-code.png", full_page=True)


def _events_until_approval(server: Server, run_id: str) -> tuple[str, str]:
    """The run's event stream as the server sent it up to its approval request, and the call's id: what a tab
    saw before it lost touch (`retry:` keeps its EventSource from reconnecting while the test lasts)."""
    blocks, block = ["retry: 3600000\n\n"], []
    with server.client.stream("GET", f"/runs/{run_id}/events") as answer:
        assert answer.status_code == 200
        for line in answer.iter_lines():
            block.append(line)
            if line:
                continue
            blocks.append("\n".join(block) + "\n")
            if "event: approval_requested" in block:
                data = next(item for item in block if item.startswith("data: "))
                return "".join(blocks), json.loads(data[len("data: ") :])["data"]["id"]
            block = []
    raise AssertionError("the run never asked for approval")


def test_a_stale_tab_that_approves_after_a_decision_elsewhere_says_so_and_loses_its_buttons(
    tab: Tab, tmp_path: Path
) -> None:
    page, server = tab.page, tab.server
    run_id = server.start_run(LIST_FILES)
    frozen, call_id = _events_until_approval(server, run_id)
    events = f"**/runs/{run_id}/events*"
    page.route(
        events, lambda route: route.fulfill(status=200, headers={"Content-Type": "text/event-stream"}, body=frozen)
    )
    held: list[Any] = []
    page.route(f"**/runs/{run_id}/approvals/**", lambda route: held.append(route))
    tab.open(f"run={run_id}")
    card = page.locator(f".tool[data-id='{call_id}']")
    expect(card).to_have_attribute("data-status", "awaiting", timeout=WAIT)

    decided = server.client.post(
        f"/runs/{run_id}/approvals/{call_id}", json={"decision": "deny", "reason": "elsewhere"}
    )
    assert decided.status_code == 200, decided.text
    card.locator(".approve").click()
    # While the decision is in flight, no button can send another.
    for name in ("Approve", "Deny", "Edit arguments"):
        expect(card.get_by_role("button", name=name)).to_be_disabled()
    for _ in range(WAIT // 20):  # the request reaches the route a moment after the click
        if held:
            break
        page.wait_for_timeout(20)
    assert len(held) == 1, "the decision was never sent"
    held[0].continue_()
    expect(card.locator(".decision")).to_have_text("Decided elsewhere", timeout=WAIT)
    expect(card.locator("button")).to_have_count(0)
    assert card.locator(".decide").count() == 0
    page.screenshot(path=tmp_path / "stale.png", full_page=True)

    # In touch again, the tab shows what was decided.
    page.unroute(events)
    page.reload()
    tab.finished()
    expect(card.locator(".decision")).to_have_text("Denied: elsewhere")
    expect(card).to_have_attribute("data-status", "denied")


def test_stop_cancels_a_run_waiting_for_a_decision_and_the_status_says_why_runs_stopped(tab: Tab) -> None:
    page = tab.page
    tab.open()
    card = tab.ask(LIST_FILES)
    page.get_by_role("button", name="Stop").click()
    tab.finished("Stopped: cancelled")
    expect(page.locator("#stop")).to_be_hidden()
    expect(card.locator("button")).to_have_count(0)
    assert tab.server.state(tab.hash_run())["status"] == "stopped"

    # A run past its deadline, opened later, says so in as many words.
    late = tab.server.start_run(LIST_FILES, deadline=1)
    assert tab.server.wait_for(late, over)["stop_reason"] == "deadline"
    page.goto(f"{tab.server.url}/#run={late}")
    tab.finished("Stopped: deadline")


def test_the_run_list_opens_an_earlier_run_and_is_refreshed_when_a_run_finishes(tab: Tab, tmp_path: Path) -> None:
    page, server = tab.page, tab.server
    earlier = server.start_run("what is the weather in Oslo")
    later = server.start_run("what is the status of order ORD-777777")
    for run_id in (earlier, later):
        server.wait_for(run_id, over)
    tab.open()
    runs = page.locator("#run-list .run-link")
    expect(runs.first).to_have_attribute("data-run", later, timeout=WAIT)
    item = page.locator(f".run-link[data-run='{earlier}']")
    expect(item.locator(".preview")).to_have_text("what is the weather in Oslo")
    assert "Finished" in item.inner_text()

    item.click()
    tab.finished()
    assert tab.hash_run() == earlier
    expect(item).to_have_attribute("aria-current", "true")
    assert _texts(page.locator(".msg.user")) == ["what is the weather in Oslo"]
    card = page.locator(".tool")
    expect(card).to_have_attribute("data-status", "ok")
    assert card.locator(".name").inner_text() == "get_current_weather"
    assert "Oslo" in card.locator(".result").inner_text()
    page.screenshot(path=tmp_path / "earlier-run.png", full_page=True)

    page.locator(f".run-link[data-run='{later}']").click()
    expect(page.locator(".msg.user")).to_have_text("what is the status of order ORD-777777", timeout=WAIT)
    tab.finished()
    # A returnDirect tool's result is the answer, drawn like one.
    expect(page.locator(".msg.assistant")).to_have_text("Order ORD-777777: shipped, arriving in 2 days.")

    # A run started here and finished is at the top of the list when it ends.
    page.get_by_role("link", name="New conversation").click()
    expect(page.locator("#about")).to_be_visible()
    page.fill("#prompt", "what is the weather in Lima")
    page.click("#send")
    tab.finished()
    newest = tab.hash_run()
    expect(runs.first).to_have_attribute("data-run", newest, timeout=WAIT)
    expect(runs.first).to_contain_text("Finished")


def test_answers_are_markdown_and_hostile_markdown_runs_no_code(tab: Tab, tmp_path: Path) -> None:
    page = tab.page
    tab.open()
    card = tab.ask("show the files in the workspace")
    tab.edit(card, {"program": "cat", "args": ["answer.md"]})
    tab.finished()
    answer = page.locator(".turn").last.locator(".msg.assistant").last
    expect(answer.locator("h4")).to_have_text("A heading")
    assert _texts(answer.locator("strong")) == ["bold"]
    assert _texts(answer.locator("em")) == ["italic"]
    assert _texts(answer.locator("pre code")) == ['print("<b>not bold</b>")']
    assert "code" in _texts(answer.locator("p code"))
    assert _texts(answer.locator("ol li")) == ["one", "two"]
    assert _texts(answer.locator("ul li"))[-2:] == ["first item", "second item"]
    links = answer.locator("a")
    assert [(a.get_attribute("href"), a.inner_text()) for a in links.all()] == [
        ("https://example.org/docs", "safe link"),
        ("https://example.com/bare", "https://example.com/bare"),
    ]
    assert all(a.get_attribute("rel") == "noopener noreferrer" for a in links.all())
    assert all(a.get_attribute("target") == "_blank" for a in links.all())
    # Markup and other schemes stay text, as written.
    text = answer.inner_text()
    for written in (
        "[bad one](javascript:alert(1))",
        '<img src="http://evil.example/x.png" onerror="alert(1)">',
        "<script>alert(2)</script>",
        "[data](data:text/html,<script>alert(3)</script>)",
    ):
        assert written in text
    assert answer.locator("img, script, iframe").count() == 0
    page.screenshot(path=tmp_path / "markdown.png", full_page=True)

    # The renderer itself on inputs built to make it hang or recurse: each returns, as text and safe links only.
    drawn = page.evaluate(
        """texts => texts.map(text => {
            const holder = document.createElement('div');
            holder.append(markdown(text));
            const hrefs = Array.from(holder.querySelectorAll('a')).map(a => a.href);
            return [holder.textContent.length, holder.querySelectorAll('img, script, iframe').length,
                    hrefs.every(href => /^https?:/.test(href))];
        })""",
        HOSTILE,
    )
    assert len(drawn) == len(HOSTILE)
    for (length, unsafe, links_ok), hostile in zip(drawn, HOSTILE, strict=True):
        assert unsafe == 0 and links_ok and length <= len(hostile), hostile[:40]
