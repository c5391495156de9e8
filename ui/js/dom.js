// Building the page from data: text always goes in as text (never as HTML), so nothing a
// payload, a header or a reply holds can become markup.

/** An element: `h('a', {href: '#/x', class: 'y', onclick: fn}, 'text', child, …)`. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    // through the CSSOM: the page's CSP refuses style attributes
    else if (k === 'style') Object.assign(el.style, v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces what `el` shows. */
export function show(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

/** A time as the operator's browser shows it, with seconds. */
export function time(v) {
  if (v === null || v === undefined) return '—';
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? String(v) : d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

/** Milliseconds between two times, said briefly. */
export function duration(from, to) {
  if (from === null || from === undefined || to === null || to === undefined) return '';
  const ms = new Date(to).getTime() - new Date(from).getTime();
  if (!Number.isFinite(ms)) return '';
  return ms < 1000 ? `${ms} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`;
}

/** A status as a coloured badge (`ok`, `error`, `401`, …). */
export function badge(status) {
  const s = String(status ?? '—');
  const kind = /^(ok|sent|consumed|2\d\d)$/.test(s)
    ? 'good'
    : /^(error|failed|timeout|5\d\d)$/.test(s)
      ? 'bad'
      : /^(4\d\d|skipped)$/.test(s)
        ? 'warn'
        : 'neutral';
  return h('span', { class: `badge ${kind}` }, s);
}

/** A table with a head row; `rows` are arrays of cells. Wrapped so it scrolls on a narrow screen. */
export function table(head, rows, attrs = {}) {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      attrs,
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          head.map((c) => h('th', {}, c)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((r) =>
          h(
            'tr',
            {},
            r.map((c) => h('td', {}, c)),
          ),
        ),
      ),
    ),
  );
}

/** Text laid out as sent; JSON pretty-printed when it parses. */
export function pre(text, attrs = {}) {
  let shown = text ?? '';
  if (typeof shown !== 'string') shown = JSON.stringify(shown, null, 2);
  else {
    try {
      shown = JSON.stringify(JSON.parse(shown), null, 2);
    } catch {
      // not JSON: shown as it is
    }
  }
  return h('pre', { class: 'block', ...attrs }, shown);
}

/** A line that says what went wrong (an API error). */
export function problem(err) {
  return h('p', { class: 'problem', role: 'alert' }, err?.message ?? String(err));
}

/** An id shortened for a list: its last 8 characters (the ids are UUIDv7, whose first ones are the time). */
export function shortId(id) {
  return String(id).slice(-8);
}
