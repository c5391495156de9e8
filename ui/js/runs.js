// Runs: the list with filters, and one run's timeline, delivery, callbacks, transcript, retry and redeliver.
import { api } from './api.js';
import { badge, duration, h, pre, problem, shortId, show, table, time } from './dom.js';

const STATUSES = ['', 'queued', 'running', 'ok', 'error', 'timeout'];
/** The list's filters, kept while the console is open. */
const filters = { status: '', hook: '', session: '', limit: '200' };

function select(name, values, value, onchange) {
  return h(
    'select',
    { name, id: `filter-${name}`, onchange },
    values.map((v) => h('option', { value: v, selected: v === value }, v || 'any')),
  );
}

/** A run's token usage as reported by its provider (docs/runtime.md, "Token usage"), or a dash when none was. */
function tokens(usage) {
  return usage ? `${usage.inputTokens.toLocaleString('en')} in · ${usage.outputTokens.toLocaleString('en')} out` : '—';
}

function runRows(list) {
  return list.map((r) => [
    h('a', { href: `#/runs/${encodeURIComponent(r.id)}`, class: 'mono' }, shortId(r.id)),
    badge(r.status),
    r.kind === 'heartbeat' ? h('em', {}, 'heartbeat') : r.hookName,
    h('span', { class: 'mono' }, r.sessionKey),
    time(r.createdAt),
    tokens(r.usage),
    r.delivery ? badge(r.delivery.status) : '—',
  ]);
}

export function runs() {
  const list = h('div', { id: 'runs-list' }, h('p', { class: 'muted loading' }, 'Loading…'));
  let timer;
  const load = async () => {
    // the server filters: the newest runs that match, however far back they are
    const q = new URLSearchParams({ limit: filters.limit });
    const hook = filters.hook.trim();
    const session = filters.session.trim();
    if (filters.status) q.set('status', filters.status);
    if (hook) q.set('hook', hook);
    if (session) q.set('session', session);
    try {
      const data = await api(`/api/runs?${q}`);
      const what = [
        filters.status && `status ${filters.status}`,
        hook && `a hook name holding ${hook}`,
        session && `a session key holding ${session}`,
      ].filter(Boolean);
      show(
        list,
        data.runs.length
          ? table(['Run', 'Status', 'Hook', 'Session', 'Created', 'Tokens', 'Delivery'], runRows(data.runs), { class: 'runs' })
          : h('p', { class: 'muted' }, 'No runs match.'),
        h('p', { class: 'muted small' }, `The newest ${data.runs.length} run(s)${what.length ? ` with ${what.join(', ')}` : ''}.`),
      );
    } catch (err) {
      show(list, problem(err));
    }
  };
  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(load, 250);
  };
  const text = (name, label) =>
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
      }),
    );
  const el = h(
    'div',
    { id: 'runs' },
    h('h1', {}, 'Runs'),
    h(
      'form',
      { class: 'filters', onsubmit: (e) => e.preventDefault() },
      h(
        'label',
        {},
        'Status',
        select('status', STATUSES, filters.status, (e) => ((filters.status = e.target.value), load())),
      ),
      text('hook', 'Hook'),
      text('session', 'Session'),
      h(
        'label',
        {},
        'Newest',
        select('limit', ['100', '200', '1000'], filters.limit, (e) => ((filters.limit = e.target.value), load())),
      ),
    ),
    list,
  );
  void load();
  return { el, refresh: later, leave: () => clearTimeout(timer) };
}

function timeline(r) {
  const steps = [
    ['accepted', r.createdAt, 'queued'],
    ['started', r.startedAt, r.attempts > 1 ? `attempt ${r.attempts}` : ''],
    ['finished', r.finishedAt, r.status],
  ];
  return h(
    'ol',
    { class: 'timeline' },
    steps.map(([what, at, note]) =>
      h(
        'li',
        { class: at ? 'done' : 'todo' },
        h('strong', {}, what),
        ' ',
        time(at),
        note ? h('span', { class: 'muted' }, ` — ${note}`) : null,
      ),
    ),
    r.delivery
      ? h(
          'li',
          { class: r.delivery.status === 'pending' ? 'todo' : 'done' },
          h('strong', {}, 'delivery'),
          ' ',
          badge(r.delivery.status),
          ` after ${r.delivery.attempts} attempt(s)`,
          r.delivery.reason ? h('span', { class: 'muted' }, ` — ${r.delivery.reason}`) : null,
        )
      : null,
  );
}

function fields(pairs) {
  return h(
    'dl',
    { class: 'fields' },
    pairs.filter(([, v]) => v !== undefined).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v ?? '—')]),
  );
}

/** A button for an admin action: posts, shows the answer in `out`, then calls `done`. */
function action(label, id, path, note, enabled, out, done) {
  const button = h(
    'button',
    {
      type: 'button',
      id,
      disabled: !enabled,
      onclick: async () => {
        button.disabled = true;
        try {
          const data = await api(path, { method: 'POST' });
          // a retry answers the new run (retryOf names this one); a redelivery this run's new delivery
          const runId = data?.retryOf ? data.runId : undefined;
          show(
            out,
            h(
              'p',
              { class: 'good' },
              `${label}: done.`,
              runId ? [' New run ', h('a', { href: `#/runs/${encodeURIComponent(runId)}` }, runId)] : null,
            ),
            pre(data),
          );
          done();
        } catch (err) {
          show(out, problem(err));
        } finally {
          button.disabled = false;
        }
      },
    },
    label,
  );
  return h('div', { class: 'action' }, button, h('span', { class: 'muted small' }, note));
}

async function transcript(el, r) {
  try {
    const data = await api(`/api/sessions/${encodeURIComponent(r.sessionKey)}/messages?limit=50`);
    const messages = data.messages.slice().reverse();
    show(
      el,
      messages.length
        ? messages.map((m) =>
            h(
              'div',
              { class: `message ${m.role} ${m.runId === r.id ? 'this-run' : ''}` },
              h('div', { class: 'muted small' }, `${m.role} · ${time(m.createdAt)}${m.runId === r.id ? ' · this run' : ''}`),
              h('div', { class: 'text' }, m.content),
            ),
          )
        : h('p', { class: 'muted' }, 'No transcript for this session.'),
    );
  } catch (err) {
    show(el, problem(err));
  }
}

/** The lifecycle events sent to callbacks for the run (docs/callbacks.md), when there are any. */
function callbackCard(callbacks) {
  if (!callbacks?.length) return null;
  return h(
    'section',
    { class: 'card', id: 'callbacks' },
    h('h2', {}, 'Callbacks'),
    table(
      ['callback', 'event', 'status', 'attempts', 'last reason', 'updated'],
      callbacks.map((c) => [
        c.callback,
        h('span', { class: 'mono' }, c.type),
        badge(c.status),
        String(c.attempts),
        c.lastError ?? '—',
        c.status === 'pending' && c.attempts > 0 ? `next try ${time(c.nextAttemptAt)}` : time(c.updatedAt),
      ]),
    ),
  );
}

/** Draws run `r` into `el`; an action's answer goes into `out`, which redrawing leaves alone. */
function render(el, r, callbacks, out, changed) {
  const d = r.delivery ?? {};
  // a forwarded run has no reply here: the other gateway delivers it
  const redeliverable = (d.status === 'failed' || d.status === 'skipped') && r.reply !== null;
  const talk = h('div', { id: 'transcript' }, h('p', { class: 'muted loading' }, 'Loading…'));
  show(
    el,
    h('p', {}, h('a', { href: '#/runs' }, '← Runs')),
    h('h1', {}, 'Run ', h('span', { class: 'mono' }, r.id)),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Timeline'),
      timeline(r),
      h('p', { class: 'muted small' }, `took ${duration(r.startedAt, r.finishedAt) || '—'}`),
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Run'),
      fields([
        ['status', badge(r.status)],
        ['kind', r.kind],
        ['hook', r.hookName],
        ['agent', r.agentId ?? '—'],
        ['session', [h('span', { class: 'mono' }, r.sessionKey), r.sessionMode === 'isolated' ? ' (isolated)' : '']],
        ['model', r.kind === 'deliver' ? 'none (delivered as written)' : `${r.model}${r.thinking ? ` (thinking ${r.thinking})` : ''}`],
        ['tokens', h('span', { id: 'run-tokens' }, tokens(r.usage))],
        ['error', r.error],
        ['summary', r.summary],
        // only for a run the `gateway` provider handed to another gateway: that gateway's run id
        ['forwarded', r.forwarded ? h('span', { class: 'mono' }, r.forwarded.runId ?? 'no run id given') : undefined],
      ]),
      h(
        'div',
        { class: 'actions' },
        action('Retry', 'retry', `/api/runs/${encodeURIComponent(r.id)}/retry`, 'a new run with the same input', true, out, changed),
      ),
    ),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Delivery'),
      fields([
        ['status', badge(d.status)],
        ['attempts', String(d.attempts ?? 0)],
        ['channel', d.channel],
        ['to', d.to],
        ['reason', d.reason],
      ]),
      h(
        'div',
        { class: 'actions' },
        action(
          'Redeliver',
          'redeliver',
          `/api/runs/${encodeURIComponent(r.id)}/redeliver`,
          redeliverable
            ? 'send the reply again'
            : r.reply === null
              ? 'the run has no reply here'
              : 'only a failed or skipped reply is sent again',
          redeliverable,
          out,
          changed,
        ),
      ),
    ),
    callbackCard(callbacks),
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'Reply'),
      r.reply ? h('div', { class: 'text' }, r.reply) : h('p', { class: 'muted' }, 'No reply.'),
    ),
    h('section', { class: 'card' }, h('h2', {}, 'Transcript of the session'), talk),
    h('details', { class: 'card' }, h('summary', {}, 'The prompt as the agent saw it'), pre(r.message)),
  );
  void transcript(talk, r);
}

/** A run still moving: it is queued or running, or its reply or one of its callbacks' events waits in the outbox. */
const moving = (r, callbacks) =>
  r.status === 'queued' || r.status === 'running' || r.delivery?.status === 'pending' || callbacks.some((c) => c.status === 'pending');

export function runDetail(id) {
  const body = h('div', {}, h('p', { class: 'muted loading' }, 'Loading…'));
  const out = h('div', { class: 'action-result card', id: 'action-result' });
  const el = h('div', { id: 'run' }, out, body);
  let status;
  let timer;
  const load = () => {
    clearTimeout(timer);
    return api(`/api/runs/${encodeURIComponent(id)}`).then(
      (data) => {
        // redrawn only when it changed, so an answer shown under a button stays
        const callbacks = data.callbacks ?? [];
        const key = JSON.stringify([data.run.status, data.run.delivery, callbacks]);
        if (key !== status) render(body, data.run, callbacks, out, () => void load());
        status = key;
        // while it moves, look again each second: the overview's figures need not change with one run
        if (moving(data.run, callbacks)) timer = setTimeout(load, 1000);
      },
      (err) => show(body, h('p', {}, h('a', { href: '#/runs' }, '← Runs')), problem(err)),
    );
  };
  void load();
  return { el, refresh: () => void load(), leave: () => clearTimeout(timer) };
}
