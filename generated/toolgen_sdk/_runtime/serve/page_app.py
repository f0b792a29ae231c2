# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The page's script around the conversation: signing in, the service's calls, the run list, /info, /stats, boot.

Every call goes through api(): same-origin credentials, `Content-Type: application/json` when it has a body, and
its answer read as JSON; a 401 shows the sign-in form (whose token is POSTed to /session, which sets an HttpOnly
cookie), a 429 says to wait. A `#token=...` in the address is POSTed to /session when the page loads, then taken
out of the address. Nothing here runs inline or evaluates text: the page works under `script-src 'self'`.
"""

from __future__ import annotations

APP_SCRIPT = r"""
const $ = id => document.getElementById(id);
const log = $('log');
const form = $('ask');
const input = $('prompt');
const send = $('send');
const runStatus = $('run-status');
const stop = $('stop');
const banner = $('banner');
const about = $('about');
const served = $('served');
const login = $('login');
const loginForm = $('login-form');
const tokenField = $('token');
const loginNote = $('login-note');
const runList = $('run-list');
const moreRuns = $('more-runs');
const runsNote = $('runs-note');
const toolStats = document.querySelector('#tool-stats tbody');
const modelStats = document.querySelector('#model-stats tbody');
const statsNote = $('stats-note');
// What the page holds: the conversation on screen, and the run list's cursor to older runs.
const page = {view: null, older: null, rights: null};

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function may(right) { return !page.rights || page.rights.includes(right); }

function busy(on) {
  input.disabled = on || !may('start');
  send.disabled = input.disabled;
}

function stopShown(on) {
  stop.hidden = !on || !may('cancel');
  stop.disabled = false;
}

function tell(message) {
  banner.textContent = message;
  banner.hidden = !message;
}

function problemOf(answer) {
  const error = answer.data && answer.data.error;
  return (error && typeof error.message === 'string' && error.message) || ('HTTP ' + answer.status);
}

// One call to the service: {ok, status, data}; never throws.
async function api(url, body) {
  const init = {method: body === undefined ? 'GET' : 'POST', credentials: 'same-origin',
    headers: {Accept: 'application/json'}};
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let answer = null;
  try {
    answer = await fetch(url, init);
  } catch (error) {
    return {ok: false, status: 0, data: {error: {message: 'the service did not answer (' + error.message + ')'}}};
  }
  const data = await answer.json().catch(() => ({}));
  if (answer.status === 401 && url !== '/session') askToSignIn('');
  if (answer.status === 429) tell('Too many requests: wait a minute, then try again.');
  return {ok: answer.ok, status: answer.status, data: data && typeof data === 'object' ? data : {}};
}

// -- signing in --

function askToSignIn(message) {
  const shown = !login.hidden;
  login.hidden = false;
  loginNote.textContent = message;
  if (!shown) tokenField.focus();
}

async function signIn(token) {
  const answer = await api('/session', {token});
  if (answer.ok) {
    login.hidden = true;
    loginNote.textContent = '';
    tokenField.value = '';
    tell('');
    restart();
  } else if (answer.status === 401) {
    askToSignIn('That token was not accepted.');
  } else if (answer.status === 429) {
    askToSignIn('Too many attempts: wait a minute, then try again.');
  } else if (answer.status === 404) {
    restart();  // a service that asks for no credential
  } else {
    askToSignIn('Could not sign in: ' + problemOf(answer));
  }
}

loginForm.addEventListener('submit', async event => {
  event.preventDefault();
  const token = tokenField.value.trim();
  if (!token) return;
  const submit = loginForm.querySelector('button');
  submit.disabled = true;
  try { await signIn(token); } finally { submit.disabled = false; }
});

// The token of a `#token=...` address, taken out of the address (and so out of its history and bookmarks).
function takeToken() {
  const kept = [];
  let token = null;
  for (const part of location.hash.replace(/^#/, '').split('&')) {
    if (!part.startsWith('token=')) {
      if (part) kept.push(part);
      continue;
    }
    try { token = decodeURIComponent(part.slice(6)); } catch (error) { token = part.slice(6); }
  }
  if (token === null) return null;
  history.replaceState(null, '', location.pathname + location.search + (kept.length ? '#' + kept.join('&') : ''));
  return token;
}

// -- what the service serves, its runs and its statistics --

async function loadInfo() {
  const answer = await api('/info');
  const title = $('about-model');
  if (!answer.ok) {
    if (answer.status !== 401) title.textContent = 'Could not read what this service serves: ' + problemOf(answer);
    return;
  }
  const info = answer.data;
  const model = info.model && typeof info.model === 'object' ? info.model : {};
  const name = model.offline ? 'Offline demo' : String(model.name || 'a model');
  served.textContent = name;
  title.textContent = model.offline ? 'Offline demo: a scripted model answers, no LLM is called.'
    : 'Model: ' + name + (model.wire ? ' (' + String(model.wire) + ')' : '');
  $('about-package').textContent = [info.package, info.version].filter(Boolean).map(String).join(' ');
  const rights = Array.isArray(info.rights) ? info.rights.map(String) : [];
  $('about-rights').textContent = 'You may: ' + (rights.join(', ') || 'nothing');
  page.rights = rights;
  if (!may('start')) {
    input.placeholder = 'Your token may read runs, not start them';
    busy(true);
  }
  const list = $('tool-list');
  list.textContent = '';
  const tools = Array.isArray(info.tools) ? info.tools : [];
  for (const tool of tools) {
    const item = el('li');
    item.append(el('code', 'name', String((tool && tool.name) || '?')),
      el('span', 'description', String((tool && tool.description) || '')));
    list.append(item);
  }
  if (!tools.length) list.append(el('li', 'note', 'No tools.'));
}

function when(created) {
  const date = new Date(typeof created === 'number' ? created * 1000 : String(created));
  return isNaN(date.getTime()) ? '' : date.toLocaleString();
}

function runLabel(status, reason) {
  if (status === 'running') return 'Running';
  if (status === 'awaiting_approval') return 'Awaiting approval';
  if (status === 'error' || reason === 'error') return 'Error';
  return reason ? finishedLabel(reason, '') : String(status || '');
}

function runItem(run) {
  const item = el('li');
  const link = el('a', 'run-link');
  link.href = '#run=' + encodeURIComponent(String(run.id));
  link.dataset.run = String(run.id);
  link.append(el('span', 'preview', String(run.preview || run.prompt || '(no text)')),
    el('span', 'note', [runLabel(run.status, run.stop_reason), when(run.created)].filter(Boolean).join(' · ')));
  item.append(link);
  return item;
}

function markOpen(id) {
  for (const link of runList.querySelectorAll('.run-link')) {
    if (link.dataset.run === id) link.setAttribute('aria-current', 'true');
    else link.removeAttribute('aria-current');
  }
}

async function loadRuns(older) {
  const cursor = older ? page.older : null;
  const answer = await api('/runs?limit=20' + (cursor ? '&before=' + encodeURIComponent(cursor) : ''));
  if (!answer.ok || !Array.isArray(answer.data.runs)) {
    if (answer.status !== 401) runsNote.textContent = 'Runs unavailable: ' + problemOf(answer);
    return;
  }
  if (!older) runList.textContent = '';
  for (const run of answer.data.runs) if (run && run.id) runList.append(runItem(run));
  page.older = answer.data.next || null;
  moreRuns.hidden = !page.older;
  runsNote.textContent = runList.children.length ? '' : 'No runs yet.';
  const turn = liveTurn();
  markOpen(turn ? turn.id : null);
}

moreRuns.addEventListener('click', () => loadRuns(true));

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
  const answer = await api('/stats');
  if (!answer.ok) {
    if (answer.status !== 401) statsNote.textContent = 'statistics unavailable: ' + problemOf(answer);
    return;
  }
  const data = answer.data;
  statsRows(toolStats, Object.entries(data.tools || {}), s => [s.calls, s.errors,
    s.denied + s.skipped, rate(s.success_rate), ms(s.p50_ms), ms(s.p95_ms)], 'no tool calls');
  statsRows(modelStats, Object.entries(data.models || {}), s => [s.calls, s.errors,
    rate(s.success_rate), ms(s.p50_ms), ms(s.p95_ms), count(s.input_tokens) + ' / ' + count(s.output_tokens)],
    'no model calls');
  statsNote.textContent = 'as of ' + new Date(data.end * 1000).toLocaleTimeString();
}

// -- asking, stopping, opening --

stop.addEventListener('click', async () => {
  const turn = liveTurn();
  if (!turn) return;
  stop.disabled = true;
  const answer = await api('/runs/' + encodeURIComponent(turn.id) + '/cancel', {});
  if (answer.status === 202) {
    headline(turn, 'Stopping…');
    turn.box.append(el('div', 'note-line', 'Stop requested.'));
    return;
  }
  turn.box.append(el('div', 'problem', 'Could not stop: ' + problemOf(answer)));
  // 404 and 409: there is no running run to stop; anything else may work if tried again.
  if (answer.status === 404 || answer.status === 409) stopShown(false);
  else stop.disabled = false;
});

form.addEventListener('submit', async event => {
  event.preventDefault();
  const text = input.value.trim();
  if (!text) return;
  const view = page.view && page.view.conversation ? page.view : null;
  const body = {messages: (view ? view.messages : []).concat([{role: 'user', content: text}])};
  if (view) body.conversation_id = view.conversation;
  busy(true);
  const answer = await api('/runs', body);
  if (!answer.ok || !answer.data.id) {
    busy(false);
    const where = view && view.turns.length ? view.turns[view.turns.length - 1].box : log;
    where.append(el('div', 'problem', 'Could not start the run: ' + problemOf(answer)));
    return;
  }
  input.value = '';
  tell('');
  const id = String(answer.data.id);
  if (view && page.view === view) {
    // The same conversation goes on below its earlier turns; the address names the new run.
    const turn = addTurn(view, id);
    location.hash = 'run=' + id;
    markOpen(id);
    play(turn);
  } else {
    location.hash = 'run=' + id;
  }
  loadRuns(false);
});

function showIdle() {
  closeView(page.view);
  page.view = null;
  log.textContent = '';
  about.hidden = false;
  runStatus.textContent = 'No run open';
  busy(false);
  stopShown(false);
  markOpen(null);
}

$('new').addEventListener('click', event => {
  event.preventDefault();
  history.pushState(null, '', location.pathname + location.search);
  showIdle();
  input.focus();
});

function hashRun() {
  const found = /(?:^#|&)run=([A-Za-z0-9_-]+)/.exec(location.hash);
  return found ? found[1] : null;
}

function follow() {
  const id = hashRun();
  if (!id) {
    if (page.view) showIdle();
    return;
  }
  const turn = page.view && page.view.turns.find(t => t.id === id);
  if (page.view && page.view.target === id && !turn) return;  // being opened
  if (turn) {
    markOpen(id);
    turn.box.scrollIntoView({block: 'nearest'});
  } else {
    openRun(id);
  }
}

// Everything the page shows, read again: when it loads, and after signing in.
function restart() {
  loadInfo();
  loadRuns(false);
  loadStats();
  const id = hashRun();
  if (id) openRun(id);
  else showIdle();
}

window.addEventListener('hashchange', follow);
const given = takeToken();
if (given !== null) signIn(given);
else restart();
"""
