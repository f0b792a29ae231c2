# toolgen runtime: copied byte for byte into every generated package as <package>/_runtime/; edit it in toolgen.
"""The page's markdown for answers: a small renderer in the page's script that builds DOM nodes, text by textContent.

What a model writes is never parsed as HTML: `<img onerror=...>` stays text, and only http(s) URLs become links
(opened in a new tab, rel="noopener noreferrer"); `javascript:` and every other scheme stay text. It knows
paragraphs, line breaks, headings, **bold**, *italic*, `code`, fenced code blocks, and bullet and numbered lists.
Hostile input cannot hang it: lists do not nest, emphasis and links nest at most MD_DEPTH deep, a search for a
closing marker that found none is remembered (so a million unmatched `[` cost linear time, not quadratic), no
pattern can backtrack over a long line, and a text past MD_LIMIT characters is shown as plain text.
"""

from __future__ import annotations

MARKDOWN_SCRIPT = r"""
const MD_LIMIT = 200000;
const MD_DEPTH = 4;
const MD_FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const MD_HEADING = /^ {0,3}(#{1,6})[ \t]+(.*)$/;
const MD_BULLET = /^ {0,3}[-*+][ \t]+(.*)$/;
const MD_NUMBERED = /^ {0,3}(\d{1,9})[.)][ \t]+(.*)$/;
const MD_SAFE_URL = /^https?:\/\/[^\s<>"'`]+$/i;
const MD_BARE_URL = /https?:\/\/[^\s<>"'`]+/iy;
const MD_URL_LENGTH = 2048;

function mdLink(url) {
  const link = el('a', 'link');
  link.href = url;
  link.rel = 'noopener noreferrer';
  link.target = '_blank';
  return link;
}

// Inline spans of one block's text into `parent`: code, **bold**, *italic*, [text](http...) and bare URLs.
function mdInline(text, parent, depth) {
  const searched = new Map();  // needle -> [searched from, found at or -1]: nothing lies between the two
  function find(needle, from) {
    const known = searched.get(needle);
    if (known && known[0] <= from && (known[1] === -1 || known[1] >= from)) return known[1];
    const at = text.indexOf(needle, from);
    searched.set(needle, [from, at]);
    return at;
  }
  let start = 0;
  let refused = -1;  // the `](` of a link already refused: every `[` before it would be refused again
  function flush(upTo) {
    if (upTo > start) parent.append(text.slice(start, upTo));
  }
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '`') {
      const end = find('`', i + 1);
      if (end > i + 1) {
        flush(i);
        parent.append(el('code', '', text.slice(i + 1, end)));
        i = start = end + 1;
        continue;
      }
    } else if (c === '*' && depth < MD_DEPTH) {
      const width = text[i + 1] === '*' ? 2 : 1;
      const end = find(width === 2 ? '**' : '*', i + width);
      if (end > i + width && !/\s/.test(text[i + width])) {
        flush(i);
        const span = el(width === 2 ? 'strong' : 'em');
        mdInline(text.slice(i + width, end), span, depth + 1);
        parent.append(span);
        i = start = end + width;
        continue;
      }
    } else if (c === '[' && depth < MD_DEPTH) {
      const middle = find('](', i + 1);
      const end = middle === -1 || middle === refused ? -1 : find(')', middle + 2);
      if (end !== -1 && end - middle <= MD_URL_LENGTH && MD_SAFE_URL.test(text.slice(middle + 2, end).trim())) {
        flush(i);
        const link = mdLink(text.slice(middle + 2, end).trim());
        mdInline(text.slice(i + 1, middle), link, depth + 1);
        parent.append(link);
        i = start = end + 1;
        continue;
      }
      if (end !== -1) refused = middle;
    } else if ((c === 'h' || c === 'H') && (i === 0 || /[\s(]/.test(text[i - 1]))) {
      MD_BARE_URL.lastIndex = i;
      const found = MD_BARE_URL.exec(text);
      if (found) {
        const url = mdTrimEnd(found[0], '.,;:!?)]');
        if (/^https?:\/\/[^\s]/i.test(url)) {
          flush(i);
          const link = mdLink(url);
          link.textContent = url;
          parent.append(link);
          i = start = i + url.length;
          continue;
        }
      }
    }
    i += 1;
  }
  flush(text.length);
}

// `text` without the run of `chars` it ends with (a loop: a pattern anchored at the end backtracks on long runs).
function mdTrimEnd(text, chars) {
  let end = text.length;
  while (end > 0 && chars.includes(text[end - 1])) end -= 1;
  return text.slice(0, end);
}

function mdClosesFence(line, marker) {
  const trimmed = line.trim();
  if (trimmed.length < marker.length) return false;
  for (const c of trimmed) if (c !== marker[0]) return false;
  return true;
}

// The answer's text as a fragment of DOM nodes.
function markdown(source) {
  const root = document.createDocumentFragment();
  const text = String(source);
  if (text.length > MD_LIMIT) {
    root.append(el('div', 'plain', text));  // too long to lay out: shown as it came
    return root;
  }
  const lines = text.split(/\r\n|\r|\n/);
  let paragraph = null;
  let list = null;
  let item = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = MD_FENCE.exec(line);
    if (fence) {
      paragraph = list = item = null;
      const body = [];
      for (i += 1; i < lines.length && !mdClosesFence(lines[i], fence[1]); i++) body.push(lines[i]);
      const block = el('pre', 'code');
      const code = el('code', '', body.join('\n'));
      const language = fence[2].trim().slice(0, 40);
      if (language) code.dataset.language = language;
      block.append(code);
      root.append(block);
      continue;
    }
    if (!line.trim()) {
      paragraph = list = item = null;
      continue;
    }
    const heading = MD_HEADING.exec(line);
    if (heading) {
      paragraph = list = item = null;
      const title = el('h' + Math.min(6, heading[1].length + 2), 'heading');
      let words = mdTrimEnd(heading[2], ' \t');
      const bare = mdTrimEnd(words, '#');  // `## Title ##`: closing hashes go, the # of `C#` stays
      if (bare !== words && (!bare || /[ \t]$/.test(bare))) words = mdTrimEnd(bare, ' \t');
      mdInline(words, title, 0);
      root.append(title);
      continue;
    }
    const bullet = MD_BULLET.exec(line);
    const numbered = bullet ? null : MD_NUMBERED.exec(line);
    if (bullet || numbered) {
      const kind = bullet ? 'UL' : 'OL';
      if (!list || list.tagName !== kind) {
        paragraph = null;
        list = el(kind.toLowerCase());
        if (numbered && numbered[1] !== '1') list.start = Number(numbered[1]);
        root.append(list);
      }
      item = el('li');
      mdInline(bullet ? bullet[1] : numbered[2], item, 0);
      list.append(item);
      continue;
    }
    if (item && /^\s/.test(line)) {
      // An indented line goes on with the list item above it (nested lists are drawn as its text).
      item.append(el('br'));
      mdInline(line.trim(), item, 0);
      continue;
    }
    if (paragraph) {
      paragraph.append(el('br'));
    } else {
      list = item = null;
      paragraph = el('p');
      root.append(paragraph);
    }
    mdInline(line, paragraph, 0);
  }
  return root;
}
"""
