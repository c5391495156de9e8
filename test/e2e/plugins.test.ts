/**
 * User plugins named in `plugins`: a provider, a channel and a preset from one
 * TypeScript file, with its config slice validated by its schema; an edit goes
 * live without a restart; duplicates are refused.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, get, post, runInProcess, startCli, tempDir, until, type Running } from '../helpers/cli.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const GW = `gw_${randomBytes(18).toString('hex')}`;
const auth = { authorization: `Bearer ${HOOK}` };

const plugin = (version: string) => `
import { definePlugin, Type } from 'hook-intake/plugin';

const delivered: string[] = [];
export default definePlugin({
  name: 'acme',
  agents: {
    shout: {
      configSchema: Type.Object({ type: Type.Literal('shout'), prefix: Type.String() }, { additionalProperties: false }),
      create: (config: { prefix: string }, ctx) => ({
        async run(req) {
          ctx.logger.info({ runId: req.runId }, 'shouting');
          const last = req.messages.findLast((m) => m.role === 'user')!.content;
          return { text: config.prefix + ' ${version} ' + (last.match(/\\n(.*)\\n<<<END/)?.[1] ?? last).toUpperCase() };
        },
      }),
    },
  },
  channels: {
    memo: {
      create: () => ({
        limits: { requiresTo: true },
        async send(msg) {
          delivered.push(msg.text);
          process.stdout.write('[memo ' + msg.to + '] ' + msg.text.replace(/\\n/g, ' ') + '\\n');
        },
      }),
    },
  },
  presets: {
    acme: { mappings: [{ id: 'acme-orders', match: { path: 'orders' }, action: 'agent', name: 'Orders', messageTemplate: 'order {{id}}', model: 'loud/m', channel: 'memo', to: 'desk' }] },
  },
});
`;

const config = (plugins: string[]) => ({
  gateway: { auth: { token: GW } },
  hooks: { enabled: true, token: HOOK, presets: ['acme'] },
  plugins,
  agents: { defaults: { heartbeat: { every: '0' } }, providers: { echo: { type: 'echo' }, loud: { type: 'shout', prefix: 'HEY' } } },
  channels: { console: {}, memo: {} },
});

describe('user plugins', () => {
  let srv: Running;
  beforeAll(async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'acme.ts'), plugin('v1'));
    srv = await startCli({ dir, config: config(['./acme.ts']) });
  });
  afterAll(async () => {
    await srv.stop();
    cleanup(srv.dir);
  });

  const runOf = (id: string) =>
    until(async () => {
      const run = (await get(`${srv.url}/api/runs/${id}`, GW)).body.run;
      return run.delivery.status === 'sent' ? run : undefined;
    });

  it('serves a preset, an agent provider and a channel contributed by a plugin', async () => {
    const r = await post(`${srv.url}/hooks/orders`, { id: 'A-17' }, auth);
    expect(r.status).toBe(202);
    const run = await runOf(r.body.runId);
    expect(run.model).toBe('loud/m');
    expect(run.reply).toBe('HEY v1 ORDER A-17');
    expect(run.delivery).toMatchObject({ status: 'sent', channel: 'memo', to: 'desk' });
    await srv.waitFor('[memo desk] HEY v1 ORDER A-17');
  });

  it('reloads an edited plugin without a restart', async () => {
    const mark = srv.output().length;
    writeFileSync(join(srv.dir, 'acme.ts'), plugin('v2'));
    await srv.waitFor('configuration reloaded', undefined, mark);
    const r = await post(`${srv.url}/hooks/orders`, { id: 'B-2' }, auth);
    expect((await runOf(r.body.runId)).reply).toBe('HEY v2 ORDER B-2');
  });
});

describe('plugin errors', () => {
  const check = async (files: Record<string, string>, cfg: unknown) => {
    const dir = tempDir();
    try {
      for (const [f, src] of Object.entries(files)) writeFileSync(join(dir, f), src);
      writeFileSync(join(dir, 'c.json'), JSON.stringify(cfg));
      return await runInProcess(['check', '--config', join(dir, 'c.json'), '--data', join(dir, 'data')]);
    } finally {
      cleanup(dir);
    }
  };

  it('refuses a plugin that registers a name another plugin owns', async () => {
    const dup = `export default { name: 'dup', agents: { echo: { create: () => ({ run: async () => ({ text: '' }) }) } } };`;
    const r = await check({ 'dup.mjs': dup }, { plugins: ['./dup.mjs'] });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('plugins[0]: ./dup.mjs: plugin "dup" registers agent provider "echo", already registered by plugin "echo"');
  });

  it('validates a provider config slice against the schema the plugin declares', async () => {
    const r = await check(
      { 'acme.ts': plugin('v1') },
      { ...config(['./acme.ts']), agents: { providers: { echo: { type: 'echo' }, loud: { type: 'shout', prefx: 'x' } } } },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('agents.providers.loud.prefx: unknown key');
    expect(r.stderr).toContain('agents.providers.loud: missing required key "prefix"');
  });

  it('names a plugin file that does not load', async () => {
    const r = await check({ 'broken.ts': 'export default {' }, { plugins: ['./broken.ts', './missing.ts'] });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/plugins\[0\]: \.\/broken\.ts: /);
    expect(r.stderr).toContain('plugins[1]: ./missing.ts: file not found');
  });
});
