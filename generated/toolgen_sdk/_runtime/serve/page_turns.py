# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The page's conversation view: one turn per run, each with its transcript, tool cards, steps, errors and notes.

A view is the conversation on screen; a turn is one of its runs, drawn in its own section from the run's events
(EventSource, which resends `Last-Event-ID` when it reconnects; `?after=N` when the page reconnects itself). A
new message appends a turn below the others and never clears them; opening a run (`#run=ID`) replays the earlier
runs of its conversation, then the run itself, one after the other. A card per tool call shows its name,
arguments, decision, status, progress (a bar and `done / total · message`, as the call last reported it), result
and duration; a result that is an error (its status, or a non-zero `exit_code` in the JSON a command tool
returns) is red and says so. A pending call has Approve, Deny with a
reason, and Edit arguments (collapsed); a decision in flight disables them, and a 409 (decided elsewhere) takes
them away. Each model call adds a line under its step: model, latency, tokens.
"""

from __future__ import annotations

TURNS_SCRIPT = r"""
function newView() {
  return {target: null, conversation: null, messages: [], shown: 0, turns: []};
}

function closeView(view) {
  for (const turn of view ? view.turns : []) {
    if (turn.source) turn.source.close();
    turn.source = null;
    turn.done();
  }
}

function addTurn(view, id) {
  const box = el('section', 'turn');
  box.dataset.run = id;
  log.append(box);
  const turn = {id, view, box, cards: new Map(), awaiting: new Set(), drafts: new Set(), bubble: null,
    thoughts: null, source: null, state: null, seq: 0, retries: 0, ended: false, error: ''};
  turn.finished = new Promise(resolve => { turn.done = resolve; });
  view.turns.push(turn);
  return turn;
}

// The turn whose run the header, the Stop button and the form follow: the last of the view on screen.
function liveTurn() {
  const view = page.view;
  return view && view.turns.length ? view.turns[view.turns.length - 1] : null;
}

function isLive(turn) { return turn === liveTurn(); }

function headline(turn, text) { if (isLive(turn)) runStatus.textContent = text; }

function finishedLabel(reason, error) {
  if (reason === 'finished' || reason === 'return_direct') return 'Finished';
  if (reason === 'error') return 'Error: ' + (error || 'the run failed');
  return 'Stopped: ' + String(reason || 'unknown').replace(/_/g, ' ');
}

function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map(p => (typeof p === 'string' ? p : (p && typeof p.text === 'string' ? p.text : ''))).join('');
  }
  return content == null ? '' : JSON.stringify(content);
}

function pretty(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch (error) { return String(text); }
}

function count(value) {
  return typeof value === 'number' ? value.toLocaleString('en-US') : '?';
}

// -- what a run says, drawn in its turn --

function answerBubble(turn) {
  if (!turn.bubble) {
    turn.bubble = {node: el('div', 'msg assistant'), text: '', timer: 0};
    turn.box.append(turn.bubble.node);
  }
  return turn.bubble;
}

function drawBubble(turn, bubble) {
  clearTimeout(bubble.timer);
  bubble.timer = 0;
  turn.drafts.delete(bubble);
  bubble.node.replaceChildren(markdown(bubble.text));
}

function addText(turn, text) {
  const bubble = answerBubble(turn);
  bubble.text += text;
  // Drawn at most every few tens of milliseconds: a long answer streamed in small pieces is laid out a few times.
  if (!bubble.timer) {
    bubble.timer = setTimeout(() => drawBubble(turn, bubble), 40);
    turn.drafts.add(bubble);
  }
}

function drawMessages(turn, messages) {
  for (const message of messages) {
    if (!message || typeof message !== 'object') continue;
    const text = textOf(message.content);
    if (message.role === 'user') {
      turn.box.append(el('div', 'msg user', text));
    } else if (message.role === 'assistant') {
      turn.bubble = null;
      if (text) addText(turn, text);
      for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
        const called = (call && call.function) || {};
        const node = card(turn, String(call && call.id), String(called.name || 'tool'));
        node.querySelector('.arguments').textContent = pretty(called.arguments);
        setStatus(node, 'history', 'earlier');
      }
      turn.bubble = null;
    } else if (message.role === 'tool') {
      const node = turn.cards.get(String(message.tool_call_id));
      if (node) showResult(node, {status: message.is_error ? 'error' : 'ok', content: message.content});
    }
  }
}

function card(turn, id, name) {
  let node = turn.cards.get(id);
  if (!node) {
    node = el('div', 'tool');
    node.dataset.id = id;
    const head = el('div', 'head');
    head.append(el('span', 'name', name), el('span', 'status', 'announced'), el('span', 'duration', ''));
    const result = el('pre', 'result', '');
    result.hidden = true;
    node.append(head, el('pre', 'arguments', ''), el('div', 'decision', ''), result);
    turn.cards.set(id, node);
    turn.box.append(node);
    turn.bubble = null;
  }
  return node;
}

function setStatus(node, status, label) {
  node.dataset.status = status;
  node.querySelector('.status').textContent = label || status;
}

// A command tool answers JSON with its exit code: a non-zero one is a failure, whatever the call's status says.
function exitCode(text) {
  let value = null;
  try { value = JSON.parse(text); } catch (error) { return null; }
  return value && typeof value === 'object' && Number.isInteger(value.exit_code) ? value.exit_code : null;
}

function showResult(node, data) {
  const text = textOf(data.content);
  const code = data.status === 'ok' ? exitCode(text) : null;
  if (code !== null && code !== 0) setStatus(node, 'error', 'exit code ' + code);
  else if (data.error_kind) setStatus(node, data.status, data.status + ' (' + String(data.error_kind).replace(/_/g, ' ') + ')');
  else setStatus(node, data.status);
  if (data.content == null) return;
  const result = node.querySelector('.result');
  result.hidden = false;
  result.textContent = pretty(text);
}

function button(label, cls) {
  const node = el('button', cls, label);
  node.type = 'button';
  return node;
}

function decidedElsewhere(node) {
  if (node.dataset.decided) return;
  node.querySelector('.decision').textContent = 'Decided elsewhere';
  setStatus(node, 'elsewhere', 'decided elsewhere');
}

function decisionButtons(turn, node, id, args) {
  const box = el('div', 'decide');
  if (!may('decide')) {
    box.append(el('span', 'note', 'Your token may not decide: someone who may will.'));
    node.append(box);
    return;
  }
  const approve = button('Approve', 'approve');
  const reasonLabel = el('label', 'reason-label', 'Reason ');
  const reason = el('input', 'reason');
  reason.placeholder = 'optional: the model reads it';
  reasonLabel.append(reason);
  const deny = button('Deny', 'deny');
  const toggle = button('Edit arguments', 'edit-toggle');
  toggle.setAttribute('aria-expanded', 'false');
  const editor = el('div', 'editor');
  editor.hidden = true;
  const editLabel = el('label', 'edit-label', 'Arguments to run instead (JSON)');
  const edited = el('textarea', 'edit-args');
  edited.rows = 4;
  edited.spellcheck = false;
  edited.value = pretty(args);
  editLabel.append(edited);
  const edit = button('Run with these arguments', 'edit');
  editor.append(editLabel, edit);
  const problem = el('div', 'problem', '');
  box.append(approve, reasonLabel, deny, toggle, editor, problem);
  const buttons = [approve, deny, toggle, edit];
  toggle.addEventListener('click', () => {
    editor.hidden = !editor.hidden;
    toggle.setAttribute('aria-expanded', String(!editor.hidden));
    if (!editor.hidden) edited.focus();
  });
  async function decide(body) {
    for (const each of buttons) each.disabled = true;
    problem.textContent = '';
    const url = '/runs/' + encodeURIComponent(turn.id) + '/approvals/' + encodeURIComponent(id);
    const answer = await api(url, body);
    if (answer.ok || answer.status === 409) {
      box.remove();
      // The run's approval_decided event, when it comes, says what was decided.
      if (answer.status === 409) decidedElsewhere(node);
      else if (!node.dataset.decided) node.querySelector('.decision').textContent = 'Decision sent';
      return;
    }
    problem.textContent = answer.status === 401 ? 'Sign in, then decide again.' : problemOf(answer);
    for (const each of buttons) each.disabled = false;
  }
  approve.addEventListener('click', () => decide({decision: 'approve'}));
  deny.addEventListener('click', () => decide({decision: 'deny', reason: reason.value.trim() || undefined}));
  edit.addEventListener('click', () => decide({decision: 'edit', arguments: edited.value}));
  node.append(box);
}

function stepLine(turn, data) {
  const parts = [];
  if (data.model) parts.push(String(data.model));
  if (typeof data.duration_ms === 'number') parts.push(count(Math.round(data.duration_ms)) + ' ms');
  const usage = data.usage && typeof data.usage === 'object' ? data.usage : {};
  if (usage.input_tokens != null || usage.output_tokens != null) {
    parts.push(count(usage.input_tokens) + ' in / ' + count(usage.output_tokens) + ' out');
  }
  if (data.attempt > 1) parts.push('attempt ' + data.attempt);
  const failed = data.finish_reason === 'error';
  if (failed) parts.push('failed');
  else if (data.finish_reason === 'length' || data.finish_reason === 'content_filter') {
    parts.push('cut short: ' + String(data.finish_reason).replace(/_/g, ' '));
  }
  const line = el('div', failed ? 'step-line problem' : 'step-line', parts.join(' · '));
  line.dataset.step = String(data.step);
  turn.box.append(line);
  turn.bubble = null;
  turn.thoughts = null;
}

function awaitingLabel(turn) {
  headline(turn, turn.awaiting.size ? 'Awaiting approval' : 'Running');
}

const handlers = {
  run_started(turn, data) {
    const messages = turn.state && Array.isArray(turn.state.messages) ? turn.state.messages : [];
    const started = Math.min(Number(data.messages) || 0, messages.length);
    drawMessages(turn, messages.slice(turn.view.shown, started));
    turn.view.shown = Math.max(turn.view.shown, started);
    headline(turn, 'Running');
    if (isLive(turn)) stopShown(true);
  },
  model_call_started(turn) {
    turn.bubble = null;
    turn.thoughts = null;
  },
  text_delta(turn, data) { addText(turn, String(data.text || '')); },
  reasoning_delta(turn, data) {
    if (!turn.thoughts) {
      const box = el('details', 'reasoning');
      box.append(el('summary', '', 'Reasoning'));
      turn.thoughts = document.createTextNode('');
      box.append(turn.thoughts);
      turn.box.append(box);
      turn.bubble = null;
    }
    turn.thoughts.appendData(String(data.text || ''));
  },
  model_call_finished(turn, data) { stepLine(turn, data); },
  tool_call_delta(turn, data) {
    const node = card(turn, data.id || ('announced-' + data.index), data.name || 'tool');
    if (!node.dataset.status) setStatus(node, 'announced');
    node.querySelector('.arguments').append(String(data.arguments || ''));
  },
  approval_requested(turn, data) {
    const node = card(turn, data.id, data.name);
    node.querySelector('.arguments').textContent = pretty(data.arguments);
    setStatus(node, 'awaiting', 'awaiting approval');
    turn.awaiting.add(data.id);
    awaitingLabel(turn);
    if (isLive(turn)) {
      busy(true);
      loadRuns(false);  // the list says it waits
    }
    if (!node.querySelector('.decide')) decisionButtons(turn, node, data.id, data.arguments);
  },
  approval_decided(turn, data) {
    const node = card(turn, data.id, data.name);
    const box = node.querySelector('.decide');
    if (box) box.remove();
    node.dataset.decided = data.decision;
    node.querySelector('.arguments').textContent = pretty(data.arguments);
    const said = {approve: 'Approved', deny: 'Denied', edit: 'Approved with edited arguments'};
    node.querySelector('.decision').textContent = (said[data.decision] || String(data.decision)) +
      (data.reason ? ': ' + data.reason : '');
    setStatus(node, data.decision === 'deny' ? 'denied' : 'approved',
      data.decision === 'edit' ? 'approved (edited)' : undefined);
    turn.awaiting.delete(data.id);
    awaitingLabel(turn);
  },
  tool_call_started(turn, data) {
    const node = card(turn, data.id || ('announced-' + data.index), data.name || 'tool');
    if (data.arguments == null) {
      // Announced by the stream: its arguments follow as tool_call_delta events.
      if (!node.dataset.status) setStatus(node, 'announced');
      return;
    }
    node.querySelector('.arguments').textContent = pretty(data.arguments);
    setStatus(node, 'running');
  },
  tool_call_progress(turn, data) {
    const node = card(turn, data.id || 'unnamed', data.name || 'tool');
    let box = node.querySelector('.progress');
    if (!box) {
      box = el('div', 'progress');
      box.append(el('progress', ''), el('span', 'progress-text', ''));
      node.querySelector('.decision').after(box);
    }
    const bar = box.querySelector('progress');
    const done = Number(data.progress) || 0;
    const total = typeof data.total === 'number' && data.total > 0 ? data.total : null;
    if (total === null) bar.removeAttribute('value');  // indeterminate: how far is not known
    else { bar.max = total; bar.value = Math.min(done, total); }
    const said = [total === null ? count(done) : count(done) + ' / ' + count(total)];
    if (typeof data.message === 'string' && data.message) said.push(data.message);
    box.querySelector('.progress-text').textContent = said.join(' · ');
  },
  tool_call_finished(turn, data) {
    const node = card(turn, data.id || 'unnamed', data.name || 'tool');
    showResult(node, data);
    node.querySelector('.duration').textContent = count(Math.round(Number(data.duration_ms) || 0)) + ' ms';
  },
  final_message(turn, data) {
    // A returnDirect tool's result is the answer: no model streamed it.
    if (data.stop_reason !== 'return_direct' || !data.message) return;
    turn.bubble = null;
    addText(turn, textOf(data.message.content));
  },
  error(turn, data) {
    const message = String(data.message);
    // A model call's error that ends the run comes twice, as the call's and as the run's: shown once.
    const told = data.fatal && turn.lastError === message;
    const again = data.retry ? ' (trying again: attempt ' + data.retry + ')' : '';
    if (!told) turn.box.append(el('div', 'problem', 'Error: ' + message + again));
    turn.lastError = message;
    if (data.fatal) turn.error = message;
    turn.bubble = null;
  },
  note(turn, data) {
    turn.box.append(el('div', 'note-line', 'Note: ' + String(data.message)));
    turn.bubble = null;
  },
  async run_finished(turn, data) {
    if (turn.source) turn.source.close();
    turn.source = null;
    await ended(turn, finishedLabel(data.stop_reason, turn.error));
  },
};

// The run has written its last event: the conversation's messages as it left them are the next turn's history.
async function ended(turn, label) {
  if (turn.ended) return;
  turn.ended = true;
  for (const bubble of Array.from(turn.drafts)) drawBubble(turn, bubble);
  const answer = await api('/runs/' + encodeURIComponent(turn.id));
  if (answer.ok && Array.isArray(answer.data.messages) && page.view === turn.view) {
    turn.view.messages = answer.data.messages;
    turn.view.shown = answer.data.messages.length;
    turn.view.conversation = answer.data.conversation_id || turn.view.conversation;
  }
  if (isLive(turn)) {
    runStatus.textContent = label;
    stopShown(false);
    busy(false);
    loadRuns(false);
    loadStats();
  }
  turn.done();
}

// -- following a run's events --

function receive(turn, source, type, message) {
  if (turn.source !== source || page.view !== turn.view) return;
  const seq = Number(message.lastEventId) || 0;
  if (seq && seq <= turn.seq) return;  // had it already
  let event = null;
  try { event = JSON.parse(message.data); } catch (error) { return; }
  if (seq) turn.seq = seq;
  const data = event && event.data && typeof event.data === 'object' ? event.data : {};
  try {
    const done = handlers[type](turn, data);
    if (done && done.catch) done.catch(error => turn.box.append(el('div', 'problem', String(error))));
  } catch (error) {
    turn.box.append(el('div', 'problem', 'Could not draw a ' + type + ' event: ' + error.message));
  }
  // What the event's JSON could not carry as it was (a NaN written as null), said where it happened.
  for (const note of Array.isArray(event && event.notes) ? event.notes : []) {
    turn.box.append(el('div', 'note-line', 'Note: ' + String(note)));
  }
}

function connect(turn) {
  const url = '/runs/' + encodeURIComponent(turn.id) + '/events' + (turn.seq ? '?after=' + turn.seq : '');
  const source = new EventSource(url);
  turn.source = source;
  for (const type of Object.keys(handlers)) {
    source.addEventListener(type, message => receive(turn, source, type, message));
  }
  source.addEventListener('error', () => {
    // CONNECTING: the browser reconnects by itself, with Last-Event-ID. CLOSED: it gave up (an answer not 200).
    if (source.readyState === EventSource.CLOSED) lost(turn, source);
  });
}

async function lost(turn, source) {
  if (turn.source !== source || turn.ended) return;
  source.close();
  turn.source = null;
  const answer = await api('/runs/' + encodeURIComponent(turn.id));
  if (page.view !== turn.view || turn.ended) return;
  if (answer.status === 401) return;  // the sign-in form is up; signing in opens the run again
  const status = answer.ok ? answer.data.status : null;
  if (status === 'finished' || status === 'stopped' || status === 'error') {
    await ended(turn, finishedLabel(answer.data.stop_reason || status, turn.error));
    return;
  }
  if (turn.retries < 5) {
    turn.retries += 1;
    setTimeout(() => { if (page.view === turn.view && !turn.ended && !turn.source) connect(turn); },
      1000 * turn.retries);
    return;
  }
  turn.box.append(el('div', 'problem', 'Lost the run\'s events: reload the page to follow it.'));
}

async function play(turn) {
  if (!turn.state) {
    const answer = await api('/runs/' + encodeURIComponent(turn.id));
    if (page.view !== turn.view) return;
    if (!answer.ok) {
      turn.box.append(el('div', 'problem', 'Could not open run ' + turn.id + ': ' + problemOf(answer)));
      if (answer.status !== 401) await ended(turn, 'Could not open the run');
      return;
    }
    turn.state = answer.data;
  }
  turn.view.conversation = turn.state.conversation_id || turn.view.conversation;
  connect(turn);
  await turn.finished;
}

// The runs of the conversation before run `id`, oldest first: one user message starts each turn the page sends,
// so the earlier user messages say how many to look for in the run list (newest first, a few pages at most).
async function earlierRuns(state, id) {
  const messages = Array.isArray(state.messages) ? state.messages : [];
  const wanted = messages.filter(m => m && m.role === 'user').length - 1;
  const conversation = state.conversation_id;
  const found = [];
  let seen = false;
  let cursor = null;
  for (let pages = 0; pages < 10 && conversation && found.length < wanted; pages++) {
    const answer = await api('/runs?limit=20' + (cursor ? '&before=' + encodeURIComponent(cursor) : ''));
    if (!answer.ok || !Array.isArray(answer.data.runs)) break;
    for (const run of answer.data.runs) {
      if (run && run.id === id) seen = true;
      else if (seen && run && run.conversation_id === conversation && found.length < wanted) found.push(String(run.id));
    }
    cursor = answer.data.next;
    if (!cursor) break;
  }
  return found.reverse();
}

async function openRun(id) {
  closeView(page.view);
  const view = newView();
  view.target = id;
  page.view = view;
  log.textContent = '';
  about.hidden = true;
  runStatus.textContent = 'Opening the run…';
  stopShown(false);
  busy(true);
  markOpen(id);
  const first = await api('/runs/' + encodeURIComponent(id));
  if (page.view !== view) return;
  if (!first.ok) {
    log.append(el('div', 'problem', 'Could not open run ' + id + ': ' + problemOf(first)));
    runStatus.textContent = 'No run open';
    busy(false);
    return;
  }
  const earlier = await earlierRuns(first.data, id);
  if (page.view !== view) return;
  for (const each of earlier) addTurn(view, each);
  addTurn(view, id).state = first.data;
  for (const turn of view.turns) {
    await play(turn);
    if (page.view !== view) return;
  }
}
"""
