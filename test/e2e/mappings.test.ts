/**
 * Named hooks over real HTTP: mappings with templates and JS/TS transforms,
 * every transform return form, failures and deadlines, the gmail preset, and
 * configs that try to escape the transforms directory or reach prototypes.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offlineGeneration } from '../../src/cli/generation.ts';
import { ConfigError, formatIssue } from '../../src/errors.ts';
import { cleanup, get, post, ROOT, runCli, startCli, tempDir, until, type Running } from '../helpers/cli.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const GW = `gw_${randomBytes(18).toString('hex')}`;
const auth = { authorization: `Bearer ${HOOK}` };

const TRANSFORMS: Record<string, string> = {
  'github.ts': `
    import type { TransformContext, TransformResult } from '${ROOT}/src/transforms/types.ts';
    interface Issue { action: string; issue: { number: number; title: string }; repository: { full_name: string } }
    export default function github(ctx: TransformContext<Issue>): TransformResult {
      const n: number = ctx.payload.issue.number;
      return { message: \`Issue #\${n} \${ctx.payload.action}: \${ctx.payload.issue.title} (\${ctx.headers['x-github-event']})\` };
    }`,
  'nullish.ts': `export default () => null;`,
  'undef.mjs': `export function transform() { return undefined; }`,
  'fan.ts': `export default (ctx: { payload: { items: string[] } }) => [
      { kind: 'wake', text: 'first ' + ctx.payload.items[0] },
      null,
      { message: 'second ' + ctx.payload.items[1], sessionKey: 'hook:fan:2' },
    ];`,
  'throws.cjs': `module.exports = function () { throw new Error('payment processor said no'); };`,
  'stuck.js': `export default function () { for (;;) {} }`,
  // holds its worker, synchronously, until the file the payload names exists
  'held.js': `import { existsSync } from 'node:fs';
    export default function (ctx) {
      const nap = new Int32Array(new SharedArrayBuffer(4));
      while (!existsSync(ctx.payload.release)) Atomics.wait(nap, 0, 0, 5);
      return { kind: 'wake', text: 'released' };
    }`,
  'named.ts': `export const shape = (ctx: { payload: { n: number } }) => ({ kind: 'wake', text: 'n=' + ctx.payload.n, mode: 'next-heartbeat' });`,
  'leaky.ts': `export default (ctx: { headers: Record<string, string> }) => ({ message: JSON.stringify(ctx.headers) });`,
  'wrong-field.ts': `export default () => ({ text: 'a wake field on an agent action' });`,
};

const config = {
  gateway: { auth: { token: GW } },
  hooks: {
    enabled: true,
    token: HOOK,
    presets: ['gmail'],
    mappings: [
      {
        id: 'github',
        match: { path: 'github', headers: { 'x-github-event': { in: ['issues', 'pull_request'] } } },
        transform: { module: 'github.ts' },
        name: 'GitHub',
        sessionKey: 'hook:github:{{repository.full_name}}',
        deliver: false,
      },
      { id: 'skip', match: { path: 'skip' }, transform: { module: 'nullish.ts' } },
      {
        id: 'keep',
        match: { path: 'keep' },
        messageTemplate: 'Kept {{payload.x}} via {{path}} from {{query.from}}',
        transform: { module: 'undef' },
        deliver: false,
      },
      { id: 'fan', match: { path: 'fan' }, transform: { module: 'fan.ts' }, deliver: false },
      { id: 'boom', match: { path: 'boom' }, transform: { module: 'throws.cjs' } },
      { id: 'stuck', match: { path: 'stuck' }, transform: { module: 'stuck.js', timeoutMs: 300 } },
      { id: 'held', match: { path: 'held' }, transform: { module: 'held.js', timeoutMs: 60_000 } },
      { id: 'named-export', match: { path: 'named' }, transform: { module: 'named.ts', export: 'shape' } },
      { id: 'leaky', match: { path: 'leaky' }, transform: { module: 'leaky.ts' }, deliver: false },
      { id: 'wrong-field', match: { path: 'wrong-field' }, transform: { module: 'wrong-field.ts' } },
      {
        id: 'alert',
        match: { path: 'alert', payload: { status: 'firing', 'labels.severity': { regex: '^(critical|page)$' } } },
        action: 'wake',
        textTemplate: 'Alert {{labels.alertname}} is {{status}}',
      },
      { id: 'by-source', match: { source: 'form' }, messageTemplate: 'Form from {{payload.email}}: {{message}}', deliver: false },
    ],
  },
  agents: { defaults: { heartbeat: { every: '0' } } },
  session: { defaultRoute: { channel: 'console' } },
};

function writeTransforms(dir: string): void {
  mkdirSync(join(dir, 'transforms'), { recursive: true });
  for (const [f, src] of Object.entries(TRANSFORMS)) writeFileSync(join(dir, 'transforms', f), src);
}

describe('named hooks over real HTTP', () => {
  let srv: Running;
  const call = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    post(`${srv.url}${path}`, body, { ...auth, ...headers });
  const run = (id: string) => get(`${srv.url}/api/runs/${id}`, GW).then((r) => r.body.run);

  beforeAll(async () => {
    const dir = tempDir();
    writeTransforms(dir);
    srv = await startCli({ config, dir });
  });
  afterAll(async () => {
    expect(await srv.stop()).toBe(0);
    cleanup(srv.dir);
  });

  it('runs a TypeScript transform and templates, and answers like /hooks/agent', async () => {
    const r = await call(
      '/hooks/github',
      { action: 'opened', issue: { number: 7, title: 'Crash on start' }, repository: { full_name: 'acme/app' } },
      { 'x-github-event': 'issues' },
    );
    expect(r.status).toBe(202);
    expect(r.body.sessionKey).toBe('hook:github:acme/app');
    const stored = await run(r.body.runId);
    expect(stored.hookName).toBe('GitHub');
    expect(stored.message).toContain('\nIssue #7 opened: Crash on start (issues)\n');
    expect(stored.message).toContain('source="GitHub"');
  });

  it('does not match when a header rule fails', async () => {
    const r = await call('/hooks/github', { action: 'opened' }, { 'x-github-event': 'push' });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('HOOK_NOT_FOUND');
  });

  it('answers 204 when the transform returns null', async () => {
    const r = await call('/hooks/skip', { anything: true });
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
  });

  it('keeps the template result when the transform returns undefined', async () => {
    const r = await call('/hooks/keep?from=cron', { x: 42 });
    expect(r.status).toBe(202);
    expect((await run(r.body.runId)).message).toContain('\nKept 42 via keep from cron\n');
  });

  it('fans out an array into several actions and answers 202 with runIds and eventIds', async () => {
    const r = await call('/hooks/fan', { items: ['a', 'b'] });
    expect(r.status).toBe(202);
    expect(r.body.runIds).toHaveLength(1);
    expect(r.body.eventIds).toHaveLength(1);
    const events = (await get(`${srv.url}/api/main/events?limit=10000`, GW)).body.events as { id: string; text: string }[];
    expect(events.find((e) => e.id === r.body.eventIds[0])!.text).toContain('\nfirst a\n');
    const stored = await run(r.body.runIds[0]);
    expect(stored.sessionKey).toBe('hook:fan:2');
    expect(stored.message).toContain('\nsecond b\n');
  });

  it('uses a named export when transform.export is set', async () => {
    const r = await call('/hooks/named', { n: 5 });
    expect(r.status).toBe(200);
    expect(r.body.mode).toBe('next-heartbeat');
  });

  it('answers 500 TRANSFORM_FAILED for a throwing transform; the details go to the log only', async () => {
    const r = await call('/hooks/boom', {});
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ ok: false, error: 'the hook transform failed', code: 'TRANSFORM_FAILED' });
    expect(r.text).not.toContain('payment processor');
    await srv.waitFor('payment processor said no');
  });

  it('keeps answering other requests, including other transforms, while a transform holds its worker', async () => {
    const release = join(srv.dir, 'release-held');
    let heldDone = false;
    const held = call('/hooks/held', { release }).then((r) => {
      heldDone = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 100)); // let the held call reach its worker
    for (let i = 0; i < 5; i++) {
      expect((await call('/hooks/wake', { text: `still here ${i}` })).status).toBe(200);
      expect((await call('/hooks/named', { n: i })).status).toBe(200);
    }
    expect(heldDone).toBe(false);
    writeFileSync(release, '');
    expect((await held).status).toBe(200);
  });

  it('fails a transform stuck past its timeoutMs with 500, and replaces its worker', async () => {
    const r = await call('/hooks/stuck', {});
    expect(r.status).toBe(500);
    expect(r.body.code).toBe('TRANSFORM_FAILED');
    await srv.waitFor('timed out after 300 ms');
    // the worker was replaced: transforms still work afterwards
    expect((await call('/hooks/named', { n: 9 })).status).toBe(200);
  });

  it('routes by payload rules with regex and by payload.source on any path', async () => {
    const firing = await call('/hooks/alert', { status: 'firing', labels: { alertname: 'DiskFull', severity: 'critical' } });
    expect(firing.status).toBe(200);
    const ev = (await get(`${srv.url}/api/main/events?limit=10000`, GW)).body.events.find(
      (e: { id: string }) => e.id === firing.body.eventId,
    );
    expect(ev.text).toContain('\nAlert DiskFull is firing\n');
    expect((await call('/hooks/alert', { status: 'resolved', labels: { severity: 'critical' } })).status).toBe(404);
    expect((await call('/hooks/alert', { status: 'firing', labels: { severity: 'info' } })).status).toBe(404);
    const form = await call('/hooks/contact-us', { source: 'form', email: 'a@example.org', message: 'hello' });
    expect(form.status).toBe(202);
    expect((await run(form.body.runId)).message).toContain('\nForm from a@example.org: hello\n');
  });

  it('validates what a transform returns like a direct request: 400 naming a field that does not apply', async () => {
    const r = await call('/hooks/wrong-field', {});
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'INVALID_PAYLOAD', field: 'text' });
  });

  it('never shows the hook token to a transform, even one that dumps the headers', async () => {
    const r = await call('/hooks/leaky', {}, { 'x-custom': 'visible' });
    const stored = await run(r.body.runId);
    expect(stored.message).toContain('visible');
    expect(stored.message).not.toContain(HOOK);
    expect(stored.message).not.toContain('authorization');
  });

  it('serves the gmail preset: one run per message in its own session, boundary with source Email', async () => {
    const { readFileSync } = await import('node:fs');
    const payload = JSON.parse(readFileSync(join(ROOT, 'presets/gmail/fixtures/two-messages.json'), 'utf8'));
    const r = await call('/hooks/gmail', payload);
    expect(r.status).toBe(202);
    expect(r.body.runIds).toHaveLength(2);
    const runs = await Promise.all(r.body.runIds.map(run));
    expect(runs.map((x: { sessionKey: string }) => x.sessionKey)).toEqual(['hook:gmail:18c2f3a4b5d6e7f8', 'hook:gmail:18c2f3a4b5d6e7f9']);
    expect(runs[0].message).toContain('New email from Ana Lima <ana@example.org>\nSubject: Invoice 2041 overdue');
    expect(runs[0].message).not.toContain('Disk usage');
    expect(runs[1].message).toContain('Subject: Disk usage 91% on db-2');
    expect(runs[1].message).not.toContain('Invoice 2041');
    for (const x of runs) expect(x.message).toMatch(/<<<EXTERNAL_UNTRUSTED_CONTENT id="[0-9a-f]+" source="Email">>>/);
    const done = await until(async () => {
      const all = await Promise.all(r.body.runIds.map(run));
      return all.every((x: { status: string }) => x.status === 'ok') ? all : undefined;
    });
    expect(done[0].reply).toContain('Invoice 2041 overdue');
    // each session's transcript holds its own email only: the second email's agent never reads the first
    for (const [x, own, other] of [
      [runs[0], 'Invoice 2041', 'Disk usage'],
      [runs[1], 'Disk usage', 'Invoice 2041'],
    ] as const) {
      const transcript = (await get(`${srv.url}/api/sessions/${encodeURIComponent(x.sessionKey)}/messages`, GW)).body.messages
        .map((m: { content: string }) => m.content)
        .join('\n');
      expect(transcript).toContain(own);
      expect(transcript).not.toContain(other);
    }
  });

  it('neutralises forged markers in an email body', async () => {
    const { readFileSync } = await import('node:fs');
    const payload = JSON.parse(readFileSync(join(ROOT, 'presets/gmail/fixtures/injection.json'), 'utf8'));
    const r = await call('/hooks/gmail', payload);
    const stored = await run(r.body.runId);
    expect(stored.message.match(/<<<END_EXTERNAL_UNTRUSTED_CONTENT/g)).toHaveLength(1);
    expect(stored.message.match(/<<<EXTERNAL_UNTRUSTED_CONTENT/g)).toHaveLength(1);
    expect(stored.message).toContain('[[MARKER_SANITIZED]]');
  });

  it('refuses a forEach field that is not an array, and more than 200 items', async () => {
    const notArray = await call('/hooks/gmail', { source: 'gmail', messages: 'nope' });
    expect(notArray.body).toMatchObject({ code: 'INVALID_PAYLOAD', field: 'messages' });
    const tooMany = await call('/hooks/gmail', { source: 'gmail', messages: Array.from({ length: 201 }, (_, i) => ({ id: `m${i}` })) });
    expect(tooMany.body).toMatchObject({ code: 'INVALID_PAYLOAD', field: 'messages' });
    const empty = await call('/hooks/gmail', { source: 'gmail', messages: [] });
    expect(empty.status).toBe(204);
  });
});

/**
 * The lines `check` prints for a config it refuses, built in this process: what `check` and
 * `serve` load (`offlineGeneration()`), formatted as they print it. The first test below runs the
 * real commands once.
 */
async function refusalOf(file: string, dataDir: string): Promise<string> {
  try {
    const { gen } = await offlineGeneration(file, dataDir);
    await gen.dispose();
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map(formatIssue).join('\n');
    throw err;
  }
  throw new Error('the config was accepted');
}

describe('configs that are refused at load', () => {
  const base = { hooks: { enabled: true, token: HOOK } };
  const inDir = async <T>(
    mappings: unknown[],
    fn: (file: string, dataDir: string) => Promise<T>,
    setup?: (dir: string) => void,
  ): Promise<T> => {
    const dir = tempDir();
    try {
      writeTransforms(dir);
      setup?.(dir);
      const file = join(dir, 'hook-intake.json');
      writeFileSync(file, JSON.stringify({ ...base, hooks: { ...base.hooks, mappings } }));
      return await fn(file, join(dir, 'data'));
    } finally {
      cleanup(dir);
    }
  };
  const refuse = (mappings: unknown[], setup?: (dir: string) => void) => inDir(mappings, refusalOf, setup);

  it('check and serve both exit 1 and print the refusal', async () => {
    await inDir([{ id: 'esc', match: { path: 'x' }, transform: { module: '../outside.ts' } }], async (file, data) => {
      const checked = await runCli(['check', '--config', file, '--data', data]);
      const served = await runCli(['serve', '--config', file, '--data', data, '--port', '0']);
      for (const r of [checked, served]) {
        expect(r.code).toBe(1);
        expect(r.stderr).toContain('hooks.mappings[0].transform.module');
        expect(r.stderr).toContain('must not contain ".."');
        expect(r.stderr).toContain('mapping "esc"');
      }
      expect(checked.stderr).toContain(await refusalOf(file, data));
    });
  });

  it.each([
    ['../outside.ts', 'must not contain ".."'],
    ['sub/../../outside.ts', 'must not contain ".."'],
    ['/etc/passwd.js', 'must be a path relative'],
    ['missing.ts', 'not found'],
    ['notes.txt', 'transforms must be'],
  ])('refuses transform.module %s', async (module, reason) => {
    const err = await refuse([{ id: 'esc', match: { path: 'x' }, transform: { module } }]);
    expect(err).toContain('hooks.mappings[0].transform.module');
    expect(err).toContain(reason);
    expect(err).toContain('mapping "esc"');
  });

  it('refuses a symlink that leads out of the transforms directory', async () => {
    const err = await refuse([{ id: 'link', match: { path: 'x' }, transform: { module: 'evil.js' } }], (dir) => {
      writeFileSync(join(dir, 'outside.js'), 'export default () => null;');
      symlinkSync(join(dir, 'outside.js'), join(dir, 'transforms', 'evil.js'));
    });
    expect(err).toContain('outside the transforms directory');
  });

  it.each([
    ['messageTemplate', '{{__proto__.polluted}}'],
    ['messageTemplate', '{{payload.constructor.prototype}}'],
    ['sessionKey', 'hook:{{items[0].prototype}}'],
    ['name', '{{item.__proto__}}'],
    ['messageTemplate', '{{query.__proto__}}'],
  ])('refuses a prototype segment in %s: %s', async (field, template) => {
    const err = await refuse([{ id: 'proto', match: { path: 'x' }, [field]: template }]);
    expect(err).toContain(`hooks.mappings[0].${field}`);
    expect(err).toContain('is not allowed in a path');
    expect(err).toContain('mapping "proto"');
  });

  it('refuses an invalid regex, the reserved names, an unknown preset and a module without a usable export', async () => {
    expect(await refuse([{ id: 're', match: { path: 'x', payload: { a: { regex: '(' } } } }])).toContain(
      'hooks.mappings[0].match.payload["a"].regex: invalid regular expression',
    );
    expect(await refuse([{ id: 'w', match: { path: 'wake' } }])).toContain('"wake" is reserved');
    expect(await refuse([{ id: 'noexport', match: { path: 'x' }, transform: { module: 'named.ts' } }])).toContain(
      'exports neither a default function',
    );
    const dir = tempDir();
    try {
      const file = join(dir, 'c.json');
      writeFileSync(file, JSON.stringify({ hooks: { enabled: true, token: HOOK, presets: ['gmial'] } }));
      expect(await refusalOf(file, join(dir, 'data'))).toContain('hooks.presets[0]: unknown preset "gmial" (did you mean "gmail"?)');
    } finally {
      cleanup(dir);
    }
  });
});
