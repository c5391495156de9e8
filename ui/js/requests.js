// The request log: each kept hook request, its payload and headers, and replay (docs/console.md, "The pages").
import { api } from './api.js';
import { badge, h, pre, problem, shortId, show, table, time } from './dom.js';

const pick = (o, ...keys) => keys.map((k) => o?.[k]).find((v) => v !== undefined && v !== null);

function unavailable(el, err) {
  if (err.status === 404 || err.status === 405) show(el, h('p', { class: 'muted' }, 'The request log is not available on this server.'));
  else show(el, problem(err));
}

function ids(list, page) {
  if (!Array.isArray(list) || !list.length) return '—';
  return list.map((id, i) => [
    i ? ', ' : '',
    page ? h('a', { href: `#/${page}/${encodeURIComponent(id)}`, class: 'mono' }, shortId(id)) : h('span', { class: 'mono' }, shortId(id)),
  ]);
}

/** The log's filters, kept while the console is open. */
const filters = { hook: '', status: '' };

export function requests() {
  const list = h('div', { id: 'requests-list' }, h('p', { class: 'muted loading' }, 'Loading…'));
  let timer;
  let pages = 0;
  const query = (before) => {
    const q = new URLSearchParams({ limit: '100' });
    if (filters.hook.trim()) q.set('hook', filters.hook.trim());
    if (/^\d{3}$/.test(filters.status.trim())) q.set('status', filters.status.trim());
    if (before) q.set('before', before);
    return `/api/requests?${q}`;
  };
  const rowsOf = (items) =>
    items.map((r) => [
      h('a', { href: `#/requests/${encodeURIComponent(r.id)}`, class: 'mono' }, shortId(r.id)),
      time(pick(r, 'receivedAt', 'createdAt', 'at')),
      pick(r, 'hook', 'name', 'path') ?? '—',
      pick(r, 'mappingId', 'mapping') ?? '—',
      r.reason ? h('span', { title: r.reason }, badge(pick(r, 'status')), ` ${r.reason}`) : badge(pick(r, 'status')),
      ids(r.runIds, 'runs'),
      r.replayOf ? h('a', { href: `#/requests/${encodeURIComponent(r.replayOf)}` }, 'replay') : '',
    ]);
  /** The newest page, then older ones on demand (`before` the last one shown). */
  const load = async () => {
    try {
      const shown = [];
      const draw = (more) => {
        const older = more
          ? h(
              'button',
              { type: 'button', class: 'link', id: 'older', onclick: () => void page(shown[shown.length - 1].id) },
              'Older requests',
            )
          : null;
        show(
          list,
          shown.length
            ? table(['Request', 'Received', 'Hook', 'Mapping', 'Answer', 'Runs', ''], rowsOf(shown), { class: 'requests' })
            : h('p', { class: 'muted' }, 'No requests kept match.'),
          older,
        );
      };
      const page = async (before) => {
        const data = await api(query(before));
        pages = before ? pages + 1 : 1;
        shown.push(...(data.requests ?? []));
        draw((data.requests ?? []).length === 100);
      };
      await page();
    } catch (err) {
      unavailable(list, err);
    }
  };
  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(load, 250);
  };
  const input = (name, label, attrs = {}) =>
    h(
      'label',
      {},
      label,
      h('input', {
        name,
        id: `filter-${name}`,
        value: filters[name],
        placeholder: label.toLowerCase(),
        oninput: (e) => ((filters[name] = e.target.value), later()),
        ...attrs,
      }),
    );
  void load();
  const el = h(
    'div',
    { id: 'requests' },
    h('h1', {}, 'Requests'),
    h(
      'form',
      { class: 'filters', onsubmit: (e) => e.preventDefault() },
      input('hook', 'Hook'),
      input('status', 'Status', { inputmode: 'numeric', placeholder: 'e.g. 202' }),
    ),
    list,
  );
  // live updates reload only the newest page, and not while older ones are shown
  return { el, refresh: () => (pages <= 1 ? later() : undefined), leave: () => clearTimeout(timer) };
}

function headerTable(headers) {
  const entries = Object.entries(headers ?? {});
  if (!entries.length) return h('p', { class: 'muted' }, 'No headers kept.');
  return table(
    ['Header', 'Value'],
    entries.map(([k, v]) => [h('span', { class: 'mono' }, k), Array.isArray(v) ? v.join(', ') : String(v)]),
    { class: 'headers' },
  );
}

function render(el, r) {
  const out = h('div', { id: 'replay-result' });
  const replay = h(
    'button',
    {
      type: 'button',
      id: 'replay',
      onclick: async () => {
        replay.disabled = true;
        try {
          const data = await api(`/api/requests/${encodeURIComponent(r.id)}/replay`, { method: 'POST' });
          const kept = data?.requestId;
          show(
            out,
            h(
              'p',
              { class: 'good' },
              'Replayed through the current configuration.',
              kept ? [' Kept as ', h('a', { href: `#/requests/${encodeURIComponent(kept)}` }, kept), '.'] : null,
              ' The answer:',
            ),
            pre(data),
          );
        } catch (err) {
          show(out, problem(err));
        } finally {
          replay.disabled = false;
        }
      },
    },
    'Replay',
  );
  const body = pick(r, 'body', 'rawBody', 'payload');
  show(
    el,
    h('p', {}, h('a', { href: '#/requests' }, '← Requests')),
    h('h1', {}, 'Request ', h('span', { class: 'mono' }, r.id)),
    h(
      'section',
      { class: 'card' },
      h(
        'dl',
        { class: 'fields' },
        h('dt', {}, 'received'),
        h('dd', {}, time(pick(r, 'receivedAt', 'createdAt', 'at'))),
        h('dt', {}, 'hook'),
        h('dd', {}, pick(r, 'hook', 'name', 'path') ?? '—'),
        h('dt', {}, 'mapping'),
        h('dd', {}, (typeof r.mapping === 'object' && r.mapping ? r.mapping.id : pick(r, 'mapping', 'mappingId')) ?? '—'),
        h('dt', {}, 'answer'),
        h('dd', {}, badge(pick(r, 'status')), r.reason ? ` ${r.reason}` : ''),
        r.bodyKept === false
          ? [h('dt', {}, 'body'), h('dd', {}, `${r.bodyBytes} bytes, not kept: the request's credential had not passed`)]
          : null,
        h('dt', {}, 'runs'),
        h('dd', {}, ids(r.runIds, 'runs')),
        h('dt', {}, 'events'),
        h('dd', {}, ids(r.eventIds)),
        r.replayOf
          ? [h('dt', {}, 'replay of'), h('dd', {}, h('a', { href: `#/requests/${encodeURIComponent(r.replayOf)}` }, r.replayOf))]
          : null,
      ),
      h(
        'div',
        { class: 'actions' },
        h('div', { class: 'action' }, replay, h('span', { class: 'muted small' }, 'run it again through the current configuration')),
        out,
      ),
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Payload'),
      r.bodyEncoding === 'base64' ? h('p', { class: 'muted small' }, 'Not UTF-8 text: shown in base64.') : null,
      pre(body, { id: 'payload' }),
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Headers'),
      h('p', { class: 'muted small' }, 'Credentials (authorization, cookies, tokens, signatures) are never kept.'),
      headerTable(r.headers),
    ),
    r.actions ? h('details', { class: 'card' }, h('summary', {}, 'Actions'), pre(r.actions)) : null,
  );
}

export function requestDetail(id) {
  const el = h('div', { id: 'request' }, h('p', { class: 'muted loading' }, 'Loading…'));
  api(`/api/requests/${encodeURIComponent(id)}`).then(
    (data) => render(el, data.request ?? data),
    (err) => unavailable(el, err),
  );
  return { el };
}
