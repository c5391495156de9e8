// The transform tester: a mapping, a payload and headers, and what `hook-intake try` shows.
import { api } from './api.js';
import { badge, h, problem, show } from './dom.js';

/** What the form holds, kept while the console is open. */
const form = { hook: '', headers: '', body: '{\n  \n}', skipVerify: false };

/** `name: value` lines into an object; a line without a colon is an error naming it. */
function parseHeaders(text) {
  const out = {};
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const c = line.indexOf(':');
    if (c <= 0) throw new Error(`headers, line ${i + 1}: write it as "name: value"`);
    out[line.slice(0, c).trim()] = line.slice(c + 1).trim();
  });
  return out;
}

function result(el, data) {
  const r = data.result;
  const te = r.transformError;
  show(
    el,
    h('p', {}, 'Would answer ', badge(r.status), r.code ? ` ${r.code}` : '', r.actions ? ` with ${r.actions.length} action(s)` : ''),
    te
      ? h(
          'div',
          { class: 'problem', id: 'transform-error' },
          h('strong', {}, 'The transform threw: '),
          h('pre', { class: 'block' }, [te.message, ...te.stack.map((s) => `    ${s}`)].join('\n')),
        )
      : null,
    h('pre', { class: 'block', id: 'try-output' }, data.text),
  );
}

export function tester() {
  const out = h('div', { id: 'try-result' });
  const mapping = h('select', { id: 'try-mapping', name: 'mapping' }, h('option', { value: '' }, 'Loading mappings…'));
  const hook = h('input', {
    id: 'try-hook',
    name: 'hook',
    value: form.hook,
    required: true,
    placeholder: 'github',
    oninput: (e) => (form.hook = e.target.value),
  });
  const headers = h(
    'textarea',
    { id: 'try-headers', name: 'headers', rows: 4, placeholder: 'x-github-event: push', oninput: (e) => (form.headers = e.target.value) },
    form.headers,
  );
  const body = h(
    'textarea',
    { id: 'try-body', name: 'body', rows: 12, spellcheck: false, oninput: (e) => (form.body = e.target.value) },
    form.body,
  );
  const skipVerify = h('input', {
    type: 'checkbox',
    id: 'try-skip-verify',
    name: 'skipVerify',
    checked: form.skipVerify,
    onchange: (e) => (form.skipVerify = e.target.checked),
  });
  let prefix = '/hooks';
  api('/api/mappings').then(
    ({ mappings, hooksPath }) => {
      prefix = hooksPath;
      show(
        mapping,
        h('option', { value: '' }, 'pick a mapping…'),
        h('option', { value: 'wake' }, 'wake (built in)'),
        h('option', { value: 'agent' }, 'agent (built in)'),
        mappings.map((m) =>
          h('option', { value: m.path ?? m.id }, `${m.id} — ${prefix}/${m.path ?? '…'}${m.transform ? ` (transform ${m.transform})` : ''}`),
        ),
      );
    },
    (err) => show(out, problem(err)),
  );
  mapping.addEventListener('change', () => {
    if (mapping.value) hook.value = form.hook = mapping.value;
  });
  const submit = async (e) => {
    e.preventDefault();
    show(out, h('p', { class: 'muted' }, 'Trying…'));
    try {
      const data = await api('/api/try', {
        method: 'POST',
        body: { hook: hook.value, body: body.value, headers: parseHeaders(headers.value), skipVerify: skipVerify.checked },
      });
      result(out, data);
    } catch (err) {
      show(out, problem(err));
    }
  };
  const el = h(
    'div',
    { id: 'tester' },
    h('h1', {}, 'Transform tester'),
    h(
      'p',
      { class: 'muted' },
      'A dry run, as hook-intake try: which mapping matches, the templates and the transform, the actions that would be dispatched. Nothing is dispatched, stored or logged.',
    ),
    h(
      'form',
      { id: 'try-form', class: 'card', onsubmit: submit },
      h('label', { for: 'try-mapping' }, 'Mapping'),
      mapping,
      h('label', { for: 'try-hook' }, 'Hook name (the path after the hooks prefix)'),
      hook,
      h('label', { for: 'try-headers' }, 'Headers, one "name: value" a line (content-type is application/json unless given)'),
      headers,
      h('label', { for: 'try-body' }, 'Payload'),
      body,
      h(
        'label',
        { for: 'try-skip-verify', class: 'check' },
        skipVerify,
        " Don't check the mapping's signature (try an example payload unsigned)",
      ),
      h('button', { type: 'submit', id: 'try-run' }, 'Try it'),
    ),
    out,
  );
  return { el };
}
