"""Make the documentation's screenshots from the real program: `python docs/scripts/screenshots.py [--out DIR]`."""

from __future__ import annotations

import argparse
import html
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WIDTH = 1100
WAIT_MS = 30_000  # how long a browser wait may last before the script gives up
PACKAGE = "toolgen_sdk"
TOKEN_ENV = "TOOLGEN_SERVE_TOKEN"  # the variable `serve` takes its token from (the runtime's auth.TOKEN_ENV)

# A tool whose calls a person approves: money leaves the account. The offline model picks it for the prompt
# below (the prompt shares its name's words) and sends the schema's examples as its arguments.
REFUND_TOOL = """\
tools:
  - name: refund_order
    title: Refund an order
    description: Refund a customer's order, in full or in part. Money leaves the account.
    inputSchema:
      type: object
      properties:
        order_id:
          type: string
          description: The order to refund.
          examples: [ORD-20931]
        amount:
          type: number
          exclusiveMinimum: 0
          description: Amount to refund, in euros.
          examples: [49.9]
        reason:
          type: string
          description: Why, as the customer said it.
          examples: [The parcel arrived damaged]
      required: [order_id, amount, reason]
      additionalProperties: false
    requiresApproval: true
"""
REFUND_PROMPT = "Refund order ORD-20931 (49.90 EUR): the parcel arrived damaged."
# The handlers `serve --tools shop_tools:tools` loads from the project folder.
SHOP_TOOLS = """\
from typing import Any

from toolgen_sdk import Tools

tools = Tools()


@tools.refund_order.handler
def refund_order(args: Any, ctx: Any) -> dict[str, Any]:
    return {"order_id": args.order_id, "refunded": args.amount, "status": "refunded"}


@tools.get_current_weather.handler
def get_current_weather(args: Any, ctx: Any) -> dict[str, Any]:
    return {"location": args.location, "temperature": 18.0, "unit": "celsius", "conditions": "sunny"}
"""
# The tracing set-up the agent-loop page shows, around one offline run with a tool call.
TRACE_RUN = """\
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

from toolgen_sdk import Tools, agent

provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
trace.set_tracer_provider(provider)

tools = Tools()


@tools.get_current_weather.handler
def weather(args, ctx):
    return {"location": args.location, "temperature": 18.0, "unit": "celsius", "conditions": "sunny"}


model = agent.ScriptedModel([
    agent.assistant_turn(None, agent.tool_call("get_current_weather", {"location": "Paris"})),
    agent.assistant_turn("It is sunny in Paris, 18 degrees."),
])
agent.run([{"role": "user", "content": "What's the weather in Paris?"}], model, tools, agent_name="weather")
"""
TRACE_SCRIPT = "trace_run.py"
# A property added to the schema after the build: the generated package no longer matches it.
DRIFT_FROM = "      required: [location]\n"
DRIFT_TO = "        days:\n          type: integer\n          description: Days of forecast to include.\n" + DRIFT_FROM
ANNOTATION = re.compile(r"^::(?P<level>error|warning|notice)(?: (?P<properties>[^:]*))?::(?P<message>.*)$")


class ScreenshotError(Exception):
    """Something the screenshots need is missing or did not behave: the message says what."""


# ---- the browser ----


def require_browser() -> Any:
    """Playwright's sync API, once both it and Debian's chromium are known to be there."""
    try:
        from playwright import sync_api
    except ImportError:
        raise ScreenshotError(
            "playwright is not installed: pip install -e '.[test]' (or pip install playwright); "
            "the browser itself is Debian's chromium, no `playwright install` needed"
        ) from None
    if CHROMIUM is None or not os.path.exists(CHROMIUM):
        raise ScreenshotError("chromium is not on PATH: apt-get install chromium")
    return sync_api


@contextmanager
def browser_page(sync_api: Any, height: int = 800, width: int = WIDTH) -> Iterator[Any]:
    """A fresh page of headless Chromium, closed with its browser afterwards."""
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": width, "height": height})
            yield context.new_page()
        finally:
            browser.close()


def shoot_html(sync_api: Any, document: str, path: Path, width: int = WIDTH) -> None:
    """Screenshot `document` (a whole HTML page) at its full height."""
    with browser_page(sync_api, height=200, width=width) as page:
        page.set_content(document, wait_until="load")
        page.screenshot(path=str(path), full_page=True)


# ---- projects and processes ----


def toolgen(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """The installed toolgen's command line in `cwd`."""
    done = subprocess.run(
        [sys.executable, "-m", "toolgen", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )
    if check and done.returncode != 0:
        raise ScreenshotError(f"toolgen {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done


def built_project(root: Path) -> Path:
    """`toolgen init` in `root` (its get_current_weather tool) plus refund_order, then `toolgen build`."""
    root.mkdir(parents=True)
    toolgen(root, "init")
    (root / "schemas" / "tools" / "refund_order.yaml").write_text(REFUND_TOOL, encoding="utf-8")
    toolgen(root, "build", "--quiet")
    return root


def package_env(root: Path) -> dict[str, str]:
    """The environment that imports the project's generated package (and modules beside it)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "generated"), str(root)])}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_serving(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Return once `url` answers 200; raise with the server's log if it exits or takes over a minute."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ScreenshotError(f"the server exited with {process.returncode}:\n{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    raise ScreenshotError(f"the server did not answer within 60 s:\n{log.read_text(errors='replace')}")


@contextmanager
def served(root: Path, *args: str) -> Iterator[tuple[str, str]]:
    """`python -m toolgen_sdk serve` in `root` on a free loopback port: (its address, its token); stopped after."""
    port = free_port()
    token = secrets.token_urlsafe(16)
    log = root / "serve.log"
    command = [sys.executable, "-m", PACKAGE, "serve", "--host", "127.0.0.1", "--port", str(port), *args]
    with log.open("wb") as output:
        process = subprocess.Popen(
            command, cwd=root, env={**package_env(root), TOKEN_ENV: token}, stdout=output, stderr=output
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(url + "/", process, log)
        yield url, token
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the service's clean stop), then SIGKILL if it lingers."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


# ---- 1. the served page awaiting an approval ----


def serve_approval(sync_api: Any, root: Path, path: Path) -> None:
    """The page with a refund_order call awaiting approval, from a real server (in the project `root`) and its
    offline model."""
    (root / "shop_tools.py").write_text(SHOP_TOOLS, encoding="utf-8")
    database = f"sqlite:///{root / 'runs.sqlite'}"
    expect = sync_api.expect
    with (
        served(root, "--tools", "shop_tools:tools", "--database", database) as (url, token),
        browser_page(sync_api, height=760) as page,
    ):
        page.goto(f"{url}/#token={token}")
        expect(page.locator("#served")).to_have_text("Offline demo", timeout=WAIT_MS)
        page.fill("#prompt", REFUND_PROMPT)
        page.click("#send")
        card = page.locator(".turn").last.locator(".tool").last
        expect(card).to_have_attribute("data-status", "awaiting", timeout=WAIT_MS)
        expect(page.locator("#run-status")).to_have_text("Awaiting approval", timeout=WAIT_MS)
        # Down to the message box: the statistics panel below is another page's subject.
        box = page.locator("#send").bounding_box()
        bottom = int(box["y"] + box["height"]) + 24 if box else 760
        page.screenshot(path=str(path), clip={"x": 0, "y": 0, "width": WIDTH, "height": bottom})


# ---- 2. a run's trace in the console exporter ----


def trace_text(root: Path) -> str:
    """What the console exporter prints for one offline run with a tool call, in the built project `root`."""
    (root / TRACE_SCRIPT).write_text(TRACE_RUN, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, TRACE_SCRIPT], cwd=root, env=package_env(root), capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0 or '"name": "invoke_agent weather"' not in done.stdout:
        raise ScreenshotError(f"the traced run failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout


def spans_of(text: str) -> list[str]:
    """The exporter's output cut into its spans (each a top-level JSON object, `{` to `}` at column 0)."""
    spans = re.findall(r"^\{\n.*?^\}$", text, flags=re.MULTILINE | re.DOTALL)
    return spans or [text.rstrip("\n")]


def terminal_page(title: str, command: str, panes: Sequence[str]) -> str:
    """A dark terminal window running `command`, its output split side by side into `panes`."""
    cells = "".join(f"<pre>{html.escape(pane)}</pre>" for pane in panes)
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><style>
body {{ margin: 0; padding: 12px; background: #d0d4da; font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; }}
.window {{ background: #1e1e1e; border-radius: 8px; overflow: hidden; box-shadow: 0 6px 20px rgba(0,0,0,.35); }}
.bar {{ background: #323232; color: #b8b8b8; font: 13px sans-serif; padding: 8px 12px; position: relative;
        text-align: center; }}
.dots {{ position: absolute; left: 12px; top: 9px; }}
.dots span {{ display: inline-block; width: 12px; height: 12px; border-radius: 50%; margin-right: 6px; }}
.prompt {{ color: #8ae234; padding: 12px 16px 0; font-size: 12px; }}
.prompt b {{ color: #e0e0e0; font-weight: normal; }}
.panes {{ display: grid; grid-template-columns: repeat({len(panes)}, 1fr); }}
pre {{ margin: 0; padding: 4px 12px 12px; color: #d4d4d4; font-family: inherit; font-size: 11px; line-height: 1.3; white-space: pre;
       overflow: hidden; }}
pre + pre {{ border-left: 1px solid #3a3a3a; }}
</style></head><body><div class="window">
<div class="bar"><span class="dots"><span style="background:#ff5f57"></span><span style="background:#febc2e"></span>
<span style="background:#28c840"></span></span>{html.escape(title)}</div>
<div class="prompt">$ <b>{html.escape(command)}</b></div>
<div class="panes">{cells}</div>
</div></body></html>"""


def trace_console(sync_api: Any, root: Path, path: Path) -> None:
    """The console exporter's spans for a run with one tool call: the chat and tool spans, then the run's."""
    spans = spans_of(trace_text(root))
    half = (len(spans) + 1) // 2
    panes = ["\n".join(spans[:half]), "\n".join(spans[half:])]
    document = terminal_page("ConsoleSpanExporter", f"python {TRACE_SCRIPT}", [pane for pane in panes if pane])
    # Wide enough for the exporter's longest lines (a tool's description) in both panes.
    shoot_html(sync_api, document, path, width=1200)


# ---- 3. `toolgen check --format github` failing ----


def drifted_check(built: Path) -> str:
    """What `toolgen check --format github` prints (stdout and stderr in their order, as a workflow's log has
    them) on a copy of the built project whose schema changed after the build."""
    root = built.parent / f"{built.name}-drifted"
    shutil.copytree(built, root)
    schema = root / "schemas" / "tools" / "get_current_weather.yaml"
    text = schema.read_text(encoding="utf-8")
    if DRIFT_FROM not in text:
        raise ScreenshotError(f"{schema.name} from `toolgen init` no longer has {DRIFT_FROM.strip()!r}")
    schema.write_text(text.replace(DRIFT_FROM, DRIFT_TO, 1), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "toolgen", "check", "--format", "github"],
        cwd=root,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )
    if done.returncode != 1 or "::error " not in done.stdout:
        raise ScreenshotError(f"toolgen check did not fail with annotations ({done.returncode}):\n{done.stdout}")
    return done.stdout


def unescape(value: str, *, property_value: bool) -> str:
    """A workflow command's value as GitHub reads it (its %-escapes undone)."""
    pairs = [("%0D", "\r"), ("%0A", "\n"), *([("%3A", ":"), ("%2C", ",")] if property_value else []), ("%25", "%")]
    for escaped, plain in pairs:
        value = value.replace(escaped, plain)
    return value


def github_annotations(output: str) -> list[dict[str, str]]:
    """The `::error file=...,line=...,title=...::message` lines of `output`, as GitHub parses them."""
    found = []
    for line in output.splitlines():
        match = ANNOTATION.match(line)
        if not match:
            continue
        fields = {"level": match["level"], "message": unescape(match["message"], property_value=False)}
        for item in (match["properties"] or "").split(","):
            key, _, value = item.partition("=")
            if key:
                fields[key.strip()] = unescape(value, property_value=True)
        found.append(fields)
    return found


X_CIRCLE = (
    '<svg width="16" height="16" viewBox="0 0 16 16" fill="#d1242f"><path d="M2.343 13.657A8 8 0 1 1 13.658 2.343 '
    "8 8 0 0 1 2.343 13.657ZM6.03 4.97a.751.751 0 0 0-1.042.018.751.751 0 0 0-.018 1.042L6.94 8 4.97 9.97a.749.749 "
    "0 0 0 .326 1.275.749.749 0 0 0 .734-.215L8 9.06l1.97 1.97a.749.749 0 0 0 1.275-.326.749.749 0 0 0-.215-.734L9.06 "
    '8l1.97-1.97a.749.749 0 0 0-.326-1.275.749.749 0 0 0-.734.215L8 6.94Z"/></svg>'
)


def annotation_page(found: list[dict[str, str]], output: str) -> str:
    """The annotations as a workflow run's summary shows them, above the step's log that printed them."""
    items = []
    for item in found:
        where = item.get("file", "")
        if "line" in item:
            where += f"#L{item['line']}"
        items.append(
            f'<div class="item">{X_CIRCLE}<div><div class="title">{html.escape(item.get("title", "check"))}</div>'
            f'<div class="message">{html.escape(item["message"])}</div>'
            f'<a class="file">{html.escape(where)}</a></div></div>'
        )
    errors = sum(1 for item in found if item["level"] == "error")
    log = ['<span class="step">Run toolgen check --format github</span>']
    for line in output.splitlines():
        match = ANNOTATION.match(line)
        if match:
            message = unescape(match["message"], property_value=False)
            log.append(f'<span class="err">Error:</span> {html.escape(message)}')
        else:
            log.append(html.escape(line))
    log.append('<span class="err">Error: Process completed with exit code 1.</span>')
    numbered = "".join(f"<div><i>{number}</i>{line}</div>" for number, line in enumerate(log, 1))
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><style>
body {{ margin: 0; padding: 24px; background: #f6f8fa; color: #1f2328;
        font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", "DejaVu Sans", Helvetica, Arial, sans-serif; }}
.job {{ font-size: 16px; font-weight: 600; margin-bottom: 14px; display: flex; gap: 8px; align-items: center; }}
.job small {{ font-weight: normal; color: #59636e; font-size: 13px; }}
.box {{ background: #fff; border: 1px solid #d1d9e0; border-radius: 6px; }}
.head {{ padding: 14px 16px; border-bottom: 1px solid #d1d9e0; }}
.head b {{ font-size: 16px; }} .head div {{ color: #59636e; font-size: 12px; }}
.item {{ display: flex; gap: 10px; padding: 12px 16px; border-bottom: 1px solid #d1d9e0; }}
.item:last-child {{ border-bottom: 0; }} .item svg {{ flex: none; margin-top: 3px; }}
.title {{ font-weight: 600; }}
.message {{ font: 12px/1.5 ui-monospace, "DejaVu Sans Mono", monospace; color: #1f2328; margin: 2px 0; }}
.file {{ color: #0969da; font-size: 12px; }}
.log {{ margin-top: 18px; background: #0d1117; color: #e6edf3; border-radius: 6px; padding: 10px 0;
        font: 12px/1.6 ui-monospace, "DejaVu Sans Mono", monospace; }}
.log div {{ white-space: pre; padding: 0 16px; }}
.log i {{ display: inline-block; width: 28px; color: #6e7681; font-style: normal; text-align: right;
          margin-right: 14px; }}
.step {{ font-weight: 600; }} .err {{ color: #f85149; }}
</style></head><body>
<div class="job">{X_CIRCLE}<span>check</span><small>failed · toolgen check --format github</small></div>
<div class="box"><div class="head"><b>Annotations</b><div>{errors} error{"" if errors == 1 else "s"}</div></div>
{"".join(items)}</div>
<div class="log">{"".join(numbered)}</div>
</body></html>"""


def check_github_annotation(sync_api: Any, root: Path, path: Path) -> None:
    """`toolgen check --format github` failing on a drifted project, as GitHub shows its annotations."""
    output = drifted_check(root)
    shoot_html(sync_api, annotation_page(github_annotations(output), output), path)


# ---- the command line ----

SHOTS: dict[str, tuple[str, Callable[[Any, Path, Path], None]]] = {
    "serve": ("serve-approval.png", serve_approval),
    "trace": ("trace-console.png", trace_console),
    "check": ("check-github-annotation.png", check_github_annotation),
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("docs/images"), help="where the PNGs go (default docs/images)")
    parser.add_argument("--only", choices=sorted(SHOTS), action="append", help="make only this one (repeatable)")
    options = parser.parse_args(argv)
    try:
        sync_api = require_browser()
        options.out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="toolgen-screenshots-") as scratch:
            started = time.monotonic()
            root = built_project(Path(scratch) / "shop")
            print(f"built the project in {time.monotonic() - started:.1f} s")
            for key in [key for key in SHOTS if key in (options.only or SHOTS)]:
                name, make = SHOTS[key]
                started = time.monotonic()
                make(sync_api, root, options.out / name)
                size = (options.out / name).stat().st_size
                print(f"{options.out / name}: {size // 1024} KB in {time.monotonic() - started:.1f} s")
    except ScreenshotError as error:
        print(f"screenshots: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
