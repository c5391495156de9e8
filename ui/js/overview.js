// The overview: hook answers per minute by status, the run queue, the outbox, the configuration.
import { api } from './api.js';
import { h, problem, show, table, time } from './dom.js';

/** Status classes in the chart, in stacking order. */
const CLASSES = [
  ['2xx', 'good'],
  ['4xx', 'warn'],
  ['5xx', 'bad'],
];

function classOf(status) {
  return `${String(status)[0]}xx`;
}

function figure(label, value, note) {
  return h(
    'div',
    { class: 'figure' },
    h('div', { class: 'label' }, label),
    h('div', { class: 'value' }, value),
    note ? h('div', { class: 'muted small' }, note) : null,
  );
}

/** Stacked bars, one a minute, oldest left; a bar's title tells its counts. */
function chart(minutes) {
  const totals = minutes.map((m) => Object.values(m.byStatus).reduce((a, b) => a + b, 0));
  const max = Math.max(1, ...totals);
  const bars = minutes.map((m, i) => {
    const byClass = {};
    for (const [status, n] of Object.entries(m.byStatus)) byClass[classOf(status)] = (byClass[classOf(status)] ?? 0) + n;
    const parts = CLASSES.filter(([c]) => byClass[c]).map(([c, kind]) =>
      h('span', { class: `seg ${kind}`, style: { height: `${(byClass[c] / max) * 100}%` } }),
    );
    const title = `${time(m.at)}: ${totals[i]} (${
      Object.entries(m.byStatus)
        .map(([s, n]) => `${s}: ${n}`)
        .join(', ') || 'none'
    })`;
    return h('div', { class: 'bar', title }, parts);
  });
  return [
    h('div', { class: 'chart', role: 'img', 'aria-label': 'hook answers per minute, last hour' }, bars),
    h(
      'div',
      { class: 'axis muted small' },
      h('span', {}, '60 min ago'),
      h('span', {}, `peak ${Math.max(0, ...totals)}/min`),
      h('span', {}, 'now'),
    ),
  ];
}

function byStatus(minutes) {
  const sum = {};
  for (const m of minutes) for (const [s, n] of Object.entries(m.byStatus)) sum[s] = (sum[s] ?? 0) + n;
  const entries = Object.entries(sum).sort(([a], [b]) => a.localeCompare(b));
  if (!entries.length) return h('p', { class: 'muted' }, 'No hook requests in the last hour.');
  return h(
    'ul',
    { class: 'statuses' },
    entries.map(([s, n]) =>
      h('li', {}, h('span', { class: `badge ${{ 2: 'good', 4: 'warn', 5: 'bad' }[s[0]] ?? 'neutral'}` }, s), ` ${n}`),
    ),
  );
}

/** The hooks the configuration answers: endpoint, where it comes from, its credential and events. */
function hooks(list) {
  return h(
    'section',
    { class: 'card', id: 'hooks' },
    h('h2', {}, 'Hooks'),
    list.length
      ? table(
          ['Endpoint', 'Mapping', 'Preset', 'Credential', 'Events'],
          list.map((x) => [
            h('code', {}, `POST ${x.endpoint}`),
            x.mapping,
            x.preset ?? '—',
            x.credential,
            x.events ? x.events.join(', ') : 'all',
          ]),
          { class: 'hooks' },
        )
      : h('p', { class: 'muted' }, 'No mappings or presets: only /wake and /agent answer.'),
  );
}

function render(el, s) {
  const perMinute = s.requestsPerMinute;
  const last = perMinute[perMinute.length - 1];
  const lastMinute = last ? Object.values(last.byStatus).reduce((a, b) => a + b, 0) : 0;
  const reload = s.lastReloadError;
  show(
    el,
    h('h1', {}, 'Overview'),
    h(
      'div',
      { class: 'figures' },
      figure('Requests this minute', lastMinute),
      figure('Queue depth', s.runs.queued, 'runs waiting'),
      figure('Runs in flight', s.runs.running, s.runner ? `${s.runner.running} on this instance` : null),
      figure('Outbox', s.outbox.pending, `${s.outbox.failed} failed`),
      figure('Generation', `#${s.generation.id}`, `loaded ${time(s.generation.loadedAt)}, ${s.generation.mappings} mapping(s)`),
    ),
    h('section', { class: 'card' }, h('h2', {}, 'Hook requests per minute, by status (last hour)'), chart(perMinute), byStatus(perMinute)),
    hooks(s.hooks ?? []),
    h(
      'section',
      { class: `card ${reload ? 'alarm' : ''}`, id: 'reload' },
      h('h2', {}, 'Last reload'),
      reload
        ? [
            h('p', {}, `The reload at ${time(reload.at)} failed; generation #${s.generation.id} keeps serving.`),
            h(
              'ul',
              { class: 'issues' },
              reload.issues.map((i) =>
                h('li', {}, h('code', {}, `${i.file}${i.line ? `:${i.line}` : ''}`), i.path ? ` ${i.path}: ` : ' ', i.message),
              ),
            ),
          ]
        : h('p', { class: 'muted' }, 'No reload has failed.'),
    ),
  );
}

export function overview() {
  const el = h('div', { id: 'overview' }, h('p', { class: 'muted loading' }, 'Loading…'));
  api('/api/stats').then(
    (s) => render(el, s),
    (err) => show(el, problem(err)),
  );
  return { el, refresh: (s) => render(el, s) };
}
