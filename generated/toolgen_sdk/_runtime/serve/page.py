# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The service's page: plain HTML and a small script, served as they are (no build step, nothing from a CDN).

The page signs in (a `#token=...` address, or the form a 401 brings up), shows what the service serves (/info:
the model, or the offline demo, and the tools), lists the latest runs (/runs, newest first, older ones a page at
a time) and opens one at `#run=ID`, replaying its conversation's earlier runs above it. A run's events stream in
with EventSource: text drawn as markdown as it comes, a card per tool call (with a progress bar while the call
reports progress), a line per model call (model, latency, tokens), errors and notes where they happen; pending
calls are approved, denied with a reason or run with edited arguments, and a Stop button asks the service to
cancel the run. A new message goes on with the
same conversation below the turns before it. A panel shows the last hour's statistics of every run (/stats).

Whatever the server sends is drawn as text (textContent), never parsed as HTML, and the script runs under a CSP
of `default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'`: no inline script or handlers, no
eval. The script is assembled from page_app (calls, sign-in, lists, boot), page_markdown and page_turns.
"""

from __future__ import annotations

from .page_app import APP_SCRIPT
from .page_markdown import MARKDOWN_SCRIPT
from .page_turns import TURNS_SCRIPT

PAGE_HTML = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agent runs</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; background: #f4f5f7; color: #1d2330; }
header { background: #1d2330; color: #fff; padding: .6rem 1rem; display: flex; gap: 1rem;
  align-items: baseline; flex-wrap: wrap; }
header h1 { font-size: 1.05rem; margin: 0; }
header a { color: #fff; margin-left: auto; }
#served { font-size: .85rem; background: #3a4358; border-radius: .3rem; padding: 0 .45rem; }
#served:empty { display: none; }
#run-status { font-size: .85rem; opacity: .9; }
.layout { display: grid; grid-template-columns: 17rem minmax(0, 1fr); gap: 1rem; max-width: 78rem;
  margin: 0 auto; padding: 1rem; align-items: start; }
@media (max-width: 50rem) { .layout { grid-template-columns: minmax(0, 1fr); } }
#runs { background: #fff; border: 1px solid #dde1e8; border-radius: .4rem; padding: .6rem; }
#runs h2, #about h2 { font-size: 1rem; margin: 0 0 .4rem; }
#run-list { list-style: none; margin: 0; padding: 0; }
.run-link { display: block; padding: .35rem .4rem; border-radius: .3rem; color: inherit; text-decoration: none; }
.run-link:hover, .run-link[aria-current] { background: #e8eefc; }
.run-link .preview { display: block; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.run-link .note { display: block; }
#about { background: #fff; border: 1px solid #dde1e8; border-radius: .4rem; padding: .8rem 1rem; }
#tool-list { padding-left: 1.2rem; }
#tool-list li { margin: .25rem 0; }
#tool-list .description { color: #5b6577; margin-left: .5rem; }
#login { background: #fff8e6; border: 1px solid #d68a00; border-radius: .4rem; padding: .8rem 1rem;
  margin-bottom: 1rem; }
#login form { margin: 0; align-items: center; flex-wrap: wrap; }
#banner { margin-bottom: .6rem; }
.turn { border-bottom: 1px dashed #c9ced8; padding-bottom: .4rem; margin-bottom: .6rem; }
.turn > * { margin: .5rem 0; }
.msg { padding: .55rem .8rem; border-radius: .5rem; overflow-wrap: anywhere; }
.user { background: #dbe7ff; margin-left: 4rem; white-space: pre-wrap; }
.assistant { background: #fff; margin-right: 4rem; border: 1px solid #dde1e8; }
.assistant > :first-child { margin-top: 0; }
.assistant > :last-child { margin-bottom: 0; }
.assistant p, .assistant ul, .assistant ol, .assistant pre { margin: .45rem 0; }
.assistant .heading { font-size: 1rem; margin: .6rem 0 .3rem; }
.assistant code { background: #eef0f4; border-radius: .2rem; padding: 0 .2rem; font-size: .88em; }
.assistant pre { background: #f4f5f7; padding: .5rem; overflow-x: auto; }
.assistant pre code { background: none; padding: 0; }
.assistant .plain { white-space: pre-wrap; }
.tool { background: #fff; border: 1px solid #c9ced8; border-left: 4px solid #8a94a6;
  border-radius: .4rem; padding: .5rem .8rem; margin-right: 4rem; }
.tool[data-status=awaiting] { border-left-color: #d68a00; }
.tool[data-status=running], .tool[data-status=approved] { border-left-color: #2d6cdf; }
.tool[data-status=ok] { border-left-color: #1f9d55; }
.tool[data-status=error], .tool[data-status=denied], .tool[data-status=skipped] {
  border-left-color: #c53030; }
.tool[data-status=error] .status, .tool[data-status=denied] .status, .tool[data-status=skipped] .status {
  color: #c53030; font-weight: 600; }
.tool[data-status=ok] .status { color: #1f7a45; }
.tool .head { display: flex; gap: .6rem; align-items: baseline; }
.tool .name { font-weight: 600; font-family: ui-monospace, monospace; }
.tool .status { font-size: .8rem; letter-spacing: .02em; }
.tool .duration { font-size: .8rem; color: #5b6577; margin-left: auto; }
.tool pre { background: #f4f5f7; padding: .4rem .5rem; margin: .35rem 0 0;
  white-space: pre-wrap; word-break: break-word; font-size: .85rem; max-height: 24rem; overflow: auto; }
.tool[data-status=error] .result { background: #fdecec; }
.tool .decision { color: #5b6577; font-size: .85rem; }
.tool .progress { display: flex; gap: .5rem; align-items: center; font-size: .85rem; color: #5b6577;
  margin-top: .3rem; }
.tool .progress progress { flex: 0 1 12rem; }
.decide { display: flex; flex-wrap: wrap; gap: .4rem; margin-top: .5rem; align-items: center; }
.decide .reason-label { display: flex; gap: .3rem; align-items: center; flex: 1; min-width: 12rem; }
.decide .reason { flex: 1; }
.decide .editor { width: 100%; }
.decide .edit-label { display: block; font-size: .85rem; }
.decide textarea { display: block; width: 100%; box-sizing: border-box; font: .85rem ui-monospace, monospace; }
.decide .editor button { margin-top: .3rem; }
.step-line { color: #5b6577; font-size: .78rem; margin: -.2rem 0 .5rem; }
.reasoning { color: #5b6577; font-size: .85rem; white-space: pre-wrap; }
.note, .note-line { color: #5b6577; font-size: .85rem; }
.problem { color: #c53030; font-size: .85rem; }
form { display: flex; gap: .5rem; margin-top: 1rem; }
#prompt { flex: 1; font: inherit; padding: .5rem; }
button { font: inherit; padding: .35rem .8rem; cursor: pointer; }
button:disabled { cursor: default; }
#stop { padding: .1rem .7rem; }
#more-runs { margin-top: .4rem; width: 100%; }
#stats { margin-top: 1.5rem; }
#stats h2 { font-size: 1rem; margin: 0 0 .4rem; display: flex; gap: .6rem; align-items: baseline; }
#stats h3 { font-size: .9rem; margin: .8rem 0 .3rem; }
#stats table { border-collapse: collapse; width: 100%; background: #fff; font-size: .85rem; }
#stats th, #stats td { border: 1px solid #dde1e8; padding: .25rem .5rem; text-align: right; }
#stats th:first-child, #stats td:first-child { text-align: left; font-family: ui-monospace, monospace;
  word-break: break-all; }
#stats-note { font-weight: normal; }
</style>
</head>
<body>
<header><h1>Agent runs</h1><span id="served"></span><span id="run-status" role="status">No run open</span>
<button id="stop" type="button" hidden>Stop</button>
<a id="new" href="#">New conversation</a></header>
<div class="layout">
<aside id="runs" aria-label="runs">
<h2>Runs</h2>
<ul id="run-list"></ul>
<p id="runs-note" class="note"></p>
<button id="more-runs" type="button" hidden>Older runs</button>
</aside>
<main>
<section id="login" hidden aria-label="sign in">
<form id="login-form">
<label for="token">Access token</label>
<input id="token" type="password" autocomplete="current-password">
<button type="submit">Sign in</button>
</form>
<p id="login-note" class="problem" role="alert"></p>
</section>
<div id="banner" class="problem" role="alert" hidden></div>
<section id="about" aria-label="what this service serves">
<h2 id="about-model">Agent runs</h2>
<p id="about-package" class="note"></p>
<p>Ask something below. Tools:</p>
<ul id="tool-list"></ul>
<p id="about-rights" class="note"></p>
</section>
<div id="log" aria-live="polite"></div>
<form id="ask">
<input id="prompt" autocomplete="off" aria-label="Message"
 placeholder="Ask something, e.g. list the files in the workspace">
<button id="send" type="submit">Send</button>
</form>
<section id="stats" aria-label="statistics">
<h2>Last hour, all runs <span id="stats-note" class="note"></span></h2>
<h3>Tools</h3>
<table id="tool-stats"><thead><tr><th>tool</th><th>calls</th><th>errors</th><th>not run</th>
<th>success</th><th>p50</th><th>p95</th></tr></thead><tbody></tbody></table>
<h3>Models</h3>
<table id="model-stats"><thead><tr><th>model</th><th>calls</th><th>errors</th><th>success</th>
<th>p50</th><th>p95</th><th>tokens in / out</th></tr></thead><tbody></tbody></table>
</section>
</main>
</div>
<script src="/page.js"></script>
</body>
</html>
"""

# One classic script: the markdown and turn functions first, then the app, whose last lines start the page.
PAGE_SCRIPT = "'use strict';\n" + MARKDOWN_SCRIPT + TURNS_SCRIPT + APP_SCRIPT
