# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The service's page: plain HTML and a small script, served as they are (no build step, nothing from a CDN).

The script starts a run, follows its events with EventSource (which resends `Last-Event-ID` when it
reconnects), draws text as it streams and a card per tool call (name, arguments, status, result, duration),
and decides pending calls: approve, deny with a reason, or edit the arguments; a Stop button, shown while a run
runs, asks the service to cancel it. The run's id is kept in the address (`#run=...`), so a reload replays the
run's events from the start and loses nothing. A panel shows the last hour's statistics of every run (`/stats`:
per tool and per model, calls, errors, success rate, p50/p95 durations), read when the page loads and after each
run finishes. Whatever the server sends is drawn as text (textContent), never parsed as HTML.
"""

from __future__ import annotations

PAGE_HTML = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agent runs</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; background: #f4f5f7; color: #1d2330; }
header { background: #1d2330; color: #fff; padding: .6rem 1rem; display: flex; gap: 1rem;
  align-items: baseline; }
header h1 { font-size: 1.05rem; margin: 0; }
#run-status { font-size: .85rem; opacity: .85; }
main { max-width: 52rem; margin: 0 auto; padding: 1rem; }
#log > div { margin: .5rem 0; }
.msg { padding: .55rem .8rem; border-radius: .5rem; white-space: pre-wrap; }
.user { background: #dbe7ff; margin-left: 4rem; }
.assistant { background: #fff; margin-right: 4rem; border: 1px solid #dde1e8; }
.tool { background: #fff; border: 1px solid #c9ced8; border-left: 4px solid #8a94a6;
  border-radius: .4rem; padding: .5rem .8rem; margin-right: 4rem; }
.tool[data-status=awaiting] { border-left-color: #d68a00; }
.tool[data-status=running] { border-left-color: #2d6cdf; }
.tool[data-status=ok] { border-left-color: #1f9d55; }
.tool[data-status=error], .tool[data-status=denied], .tool[data-status=skipped] {
  border-left-color: #c53030; }
.tool .head { display: flex; gap: .6rem; align-items: baseline; }
.tool .name { font-weight: 600; font-family: ui-monospace, monospace; }
.tool .status { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; }
.tool .duration { font-size: .8rem; color: #5b6577; margin-left: auto; }
.tool pre { background: #f4f5f7; padding: .4rem .5rem; margin: .35rem 0 0;
  white-space: pre-wrap; word-break: break-word; font-size: .85rem; }
.decide { display: flex; flex-wrap: wrap; gap: .4rem; margin-top: .5rem; }
.decide textarea { width: 100%; font: .85rem ui-monospace, monospace; }
.decide input { flex: 1; min-width: 10rem; }
.note { color: #5b6577; font-size: .85rem; }
.problem { color: #c53030; font-size: .85rem; }
form { display: flex; gap: .5rem; margin-top: 1rem; }
#prompt { flex: 1; font: inherit; padding: .5rem; }
button { font: inherit; padding: .35rem .8rem; cursor: pointer; }
#stop { padding: .1rem .7rem; }
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
<header><h1>Agent runs</h1><span id="run-status">no run yet</span>
<button id="stop" type="button" hidden>Stop</button>
<a id="new" href="#" style="color:#fff;margin-left:auto">new conversation</a></header>
<main>
<div id="log" aria-live="polite"></div>
<form id="ask">
<input id="prompt" autocomplete="off" placeholder="Ask something, e.g. list the files in the workspace">
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
<script src="/page.js"></script>
</body>
</html>
"""

PAGE_SCRIPT = """'use strict';
const log = document.getElementById('log');
const form = document.getElementById('ask');
const prompt = document.getElementById('prompt');
const send = document.getElementById('send');
const runStatus = document.getElementById('run-status');
const stop = document.getElementById('stop');
const toolStats = document.querySelector('#tool-stats tbody');
const modelStats = document.querySelector('#model-stats tbody');
const statsNote = document.getElementById('stats-note');
let current = null;  // {id, conversation, messages, source, bubble, cards}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map(p => (typeof p === 'string' ? p : p.text || '')).join('');
  }
  return content == null ? '' : JSON.stringify(content);
}

function pretty(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return String(text); }
}

function busy(on) { prompt.disabled = on; send.disabled = on; }

function card(id, name) {
  let node = current.cards.get(id);
  if (!node) {
    node = el('div', 'tool');
    node.dataset.id = id;
    const head = el('div', 'head');
    head.append(el('span', 'name', name), el('span', 'status', 'announced'),
      el('span', 'duration', ''));
    node.append(head, el('pre', 'arguments', ''), el('div', 'decision note', ''),
      el('pre', 'result', ''));
    node.querySelector('.result').hidden = true;
    current.cards.set(id, node);
    log.append(node);
    current.bubble = null;
  }
  return node;
}

function setStatus(node, status, label) {
  node.dataset.status = status;
  node.querySelector('.status').textContent = label || status;
}

async function post(url, body) {
  const answer = await fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify(body)});
  const data = await answer.json().catch(() => ({}));
  return {ok: answer.ok, status: answer.status, data};
}

function decisionButtons(node, id, args) {
  const box = el('div', 'decide');
  const approve = el('button', 'approve', 'Approve');
  const reason = el('input', 'reason');
  reason.placeholder = 'reason (for deny)';
  const deny = el('button', 'deny', 'Deny');
  const edited = el('textarea', 'edit-args');
  edited.rows = 3;
  edited.value = pretty(args);
  const edit = el('button', 'edit', 'Run with these arguments');
  const problem = el('div', 'problem', '');
  box.append(approve, reason, deny, edited, edit, problem);
  async function decide(body) {
    const url = '/runs/' + current.id + '/approvals/' + encodeURIComponent(id);
    const answer = await post(url, body);
    if (!answer.ok) {
      problem.textContent = (answer.data.error || {}).message || ('HTTP ' + answer.status);
    } else {
      box.remove();
    }
  }
  approve.onclick = () => decide({decision: 'approve'});
  deny.onclick = () => decide({decision: 'deny', reason: reason.value || undefined});
  edit.onclick = () => decide({decision: 'edit', arguments: edited.value});
  node.append(box);
}

function history(count) {
  for (const message of current.messages.slice(0, count)) {
    const text = textOf(message.content);
    if (message.role === 'user') log.append(el('div', 'msg user', text));
    else if (message.role === 'assistant' && text) log.append(el('div', 'msg assistant', text));
  }
}

const handlers = {
  run_started(data) {
    history(data.messages);
    runStatus.textContent = 'running';
    stopShown(true);
  },
  model_call_started() { current.bubble = null; },
  text_delta(data) {
    if (!current.bubble) {
      current.bubble = el('div', 'msg assistant', '');
      log.append(current.bubble);
    }
    current.bubble.textContent += data.text;
  },
  tool_call_delta(data) {
    const node = card(data.id || ('announced-' + data.index), data.name || 'tool');
    if (!node.dataset.status) setStatus(node, 'announced');
    node.querySelector('.arguments').textContent += data.arguments;
  },
  approval_requested(data) {
    const node = card(data.id, data.name);
    node.querySelector('.arguments').textContent = pretty(data.arguments);
    setStatus(node, 'awaiting', 'awaiting approval');
    runStatus.textContent = 'awaiting approval';
    decisionButtons(node, data.id, data.arguments);
  },
  approval_decided(data) {
    const node = card(data.id, data.name);
    const box = node.querySelector('.decide');
    if (box) box.remove();
    node.querySelector('.arguments').textContent = pretty(data.arguments);
    node.querySelector('.decision').textContent = data.decision +
      (data.reason ? ': ' + data.reason : '');
    setStatus(node, data.decision === 'deny' ? 'denied' : 'approved');
    runStatus.textContent = 'running';
  },
  tool_call_started(data) {
    const node = card(data.id || ('announced-' + data.index), data.name || 'tool');
    if (data.arguments === null || data.arguments === undefined) {
      // Announced by the stream: its arguments follow as tool_call_delta events.
      if (!node.dataset.status) setStatus(node, 'announced');
      return;
    }
    node.querySelector('.arguments').textContent = pretty(data.arguments);
    setStatus(node, 'running');
  },
  tool_call_finished(data) {
    const node = card(data.id, data.name);
    setStatus(node, data.status);
    node.querySelector('.duration').textContent = data.duration_ms + ' ms';
    const result = node.querySelector('.result');
    result.hidden = false;
    result.textContent = pretty(textOf(data.content));
  },
  error(data) { log.append(el('div', 'problem', 'error: ' + data.message)); },
  note(data) { log.append(el('div', 'problem', 'note: ' + data.message)); },
  run_finished(data) {
    runStatus.textContent = 'finished: ' + data.stop_reason;
    if (current.source) current.source.close();
    busy(false);
    stopShown(false);
    refresh();
    loadStats();
  },
};

function stopShown(on) {
  stop.hidden = !on;
  stop.disabled = false;
}

stop.addEventListener('click', async () => {
  if (!current) return;
  stop.disabled = true;
  const answer = await post('/runs/' + encodeURIComponent(current.id) + '/cancel', {});
  if (answer.status === 202) {
    runStatus.textContent = 'stopping';
    log.append(el('div', 'note', 'stop requested: ' + String(answer.data.status)));
    return;
  }
  const message = (answer.data.error || {}).message || ('HTTP ' + answer.status);
  log.append(el('div', 'problem', 'could not stop: ' + message));
  // 404 and 409: there is no running run to stop; anything else may work if tried again.
  if (answer.status === 404 || answer.status === 409) stopShown(false);
  else stop.disabled = false;
});

function ms(value) { return value == null ? '-' : Number(value).toFixed(1) + ' ms'; }
function rate(value) { return value == null ? '-' : (100 * value).toFixed(1) + '%'; }

function statsRows(body, entries, cells, empty) {
  body.textContent = '';
  if (!entries.length) {
    const cell = el('td', 'note', empty);
    cell.colSpan = 7;
    const line = el('tr');
    line.append(cell);
    body.append(line);
    return;
  }
  for (const [name, stats] of entries) {
    const line = el('tr');
    for (const value of [name].concat(cells(stats))) line.append(el('td', '', String(value)));
    body.append(line);
  }
}

async function loadStats() {
  try {
    const answer = await fetch('/stats');
    const data = await answer.json();
    if (!answer.ok) throw new Error((data.error || {}).message || ('HTTP ' + answer.status));
    statsRows(toolStats, Object.entries(data.tools || {}), s => [s.calls, s.errors,
      s.denied + s.skipped, rate(s.success_rate), ms(s.p50_ms), ms(s.p95_ms)], 'no tool calls');
    statsRows(modelStats, Object.entries(data.models || {}), s => [s.calls, s.errors,
      rate(s.success_rate), ms(s.p50_ms), ms(s.p95_ms), s.input_tokens + ' / ' + s.output_tokens],
      'no model calls');
    statsNote.textContent = 'as of ' + new Date(data.end * 1000).toLocaleTimeString();
  } catch (error) {
    statsNote.textContent = 'statistics unavailable: ' + error.message;
  }
}

async function refresh() {
  const answer = await fetch('/runs/' + current.id);
  if (answer.ok) {
    const state = await answer.json();
    current.messages = state.messages;
    current.conversation = state.conversation_id;
  }
}

async function openRun(id) {
  if (current && current.source) current.source.close();
  log.textContent = '';
  current = {id, conversation: null, messages: [], source: null, bubble: null, cards: new Map()};
  stopShown(false);
  await refresh();
  busy(true);
  const source = new EventSource('/runs/' + id + '/events');
  current.source = source;
  for (const type of Object.keys(handlers)) {
    source.addEventListener(type, message => {
      if (current.source !== source) return;
      handlers[type](JSON.parse(message.data).data);
    });
  }
}

form.addEventListener('submit', async event => {
  event.preventDefault();
  const text = prompt.value.trim();
  if (!text) return;
  const messages = (current ? current.messages : []).concat([{role: 'user', content: text}]);
  const body = {messages};
  if (current && current.conversation) body.conversation_id = current.conversation;
  busy(true);
  const answer = await post('/runs', body);
  if (!answer.ok) {
    busy(false);
    log.append(el('div', 'problem', (answer.data.error || {}).message || 'could not start'));
    return;
  }
  prompt.value = '';
  location.hash = 'run=' + answer.data.id;
});

document.getElementById('new').addEventListener('click', event => {
  event.preventDefault();
  if (current && current.source) current.source.close();
  current = null;
  log.textContent = '';
  runStatus.textContent = 'no run yet';
  busy(false);
  stopShown(false);
  location.hash = '';
});

function follow() {
  const found = /run=([A-Za-z0-9_-]+)/.exec(location.hash);
  if (found && (!current || current.id !== found[1])) openRun(found[1]);
}
window.addEventListener('hashchange', follow);
follow();
loadStats();
"""
