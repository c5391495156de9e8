/**
 * Hot reload while the server runs: a transform worker is kept ready for the
 * first reload; an edited config or transform goes live without a restart; a broken edit leaves
 * the last good generation serving and is reported in /api/status; fixing it goes live again.
 * How fast a save goes live is measured by `npm run bench:reload`, not asserted here.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prettyLine } from '../../src/log.ts';
import { cleanup, get, post, startCli, tempDir, until, type Running } from '../helpers/cli.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const GW = `gw_${randomBytes(18).toString('hex')}`;
const auth = { authorization: `Bearer ${HOOK}` };

const baseConfig = (mappings: unknown[]) => ({
  gateway: { auth: { token: GW } },
  hooks: { enabled: true, token: HOOK, mappings },
  agents: { defaults: { heartbeat: { every: '0' } } },
  session: { defaultRoute: { channel: 'console' } },
});

/** Polls until `check` passes (the reload has gone live). */
const goesLive = (check: () => Promise<boolean>) => until(check, undefined, 10);

describe('hot reload', () => {
  let srv: Running;
  let dir: string;
  const writeConfig = (mappings: unknown[]) => writeFileSync(join(dir, 'hook-intake.json'), JSON.stringify(baseConfig(mappings)));
  const writeTransform = (name: string, src: string) => writeFileSync(join(dir, 'transforms', name), src);
  const status = () => get(`${srv.url}/api/status`, GW).then((r) => r.body);
  const messageOf = async (path: string) => {
    const r = await post(`${srv.url}/hooks/${path}`, { n: 1 }, auth);
    if (r.status !== 200) return `status ${r.status}`;
    const ev = (await get(`${srv.url}/api/main/events?limit=5`, GW)).body.events.find((e: { id: string }) => e.id === r.body.eventId);
    return ev.text as string;
  };

  /** The first "reload failed" log line printed after `mark`, as the service wrote it (JSON). */
  const failureLogged = (mark: number) =>
    srv
      .output()
      .slice(mark)
      .split('\n')
      .find((l) => l.includes('reload failed'))!;
  /** The line says where and why, on one line in the pretty log too. */
  const expectOneLine = (json: string, line: number, reason: RegExp) => {
    const o = JSON.parse(json);
    expect(o).toMatchObject({ file: join(dir, 'transforms', 'shape.ts'), path: 'hooks.mappings[0].transform', line });
    expect(o.reason).toMatch(reason);
    const pretty = prettyLine(json);
    expect(pretty).toContain(`line=${line} `);
    expect(pretty.trimEnd()).not.toMatch(/\n|\\n/);
  };

  beforeAll(async () => {
    dir = tempDir();
    mkdirSync(join(dir, 'transforms'));
    writeTransform('shape.ts', `export default (ctx: { payload: { n: number } }) => ({ text: 'version one ' + ctx.payload.n });`);
    srv = await startCli({
      dir,
      config: baseConfig([{ id: 'shaped', match: { path: 'shaped' }, action: 'wake', transform: { module: 'shape.ts' } }]),
    });
  });
  afterAll(async () => {
    await srv.stop();
    cleanup(dir);
  });

  it('has an idle transform worker ready for the first reload before anything changes', async () => {
    // started once the service answers: the first save does not wait for a worker to start
    const transforms = await until(async () => {
      const t = (await status()).transforms;
      return t?.spareWorkers === 1 && t;
    });
    expect(transforms).toMatchObject({ workers: 1, busy: 0, spareWorkers: 1 });
  });

  it('serves a mapping added to the config, without a restart', async () => {
    expect((await post(`${srv.url}/hooks/added`, { n: 1 }, auth)).status).toBe(404);
    const gen = (await status()).generation.id;
    writeConfig([
      { id: 'shaped', match: { path: 'shaped' }, action: 'wake', transform: { module: 'shape.ts' } },
      { id: 'added', match: { path: 'added' }, action: 'wake', textTemplate: 'added {{n}}' },
    ]);
    await goesLive(async () => (await post(`${srv.url}/hooks/added`, { n: 1 }, auth)).status === 200);
    expect((await status()).generation.id).toBeGreaterThan(gen);
  });

  it('re-evaluates an edited transform (no stale module cache)', async () => {
    expect(await messageOf('shaped')).toContain('version one 1');
    writeTransform('shape.ts', `export default (ctx: { payload: { n: number } }) => ({ text: 'version two ' + ctx.payload.n });`);
    await goesLive(async () => (await messageOf('shaped')).includes('version two 1'));
  });

  it('keeps the last good generation serving after a broken config edit, and reports the error', async () => {
    const before = (await status()).generation.id;
    writeFileSync(join(dir, 'hook-intake.json'), '{ "hooks": { "enabled": true, "token": ');
    await srv.waitFor('reload failed', undefined, srv.output().length);
    const s = await status();
    expect(s.generation.id).toBe(before);
    expect(s.lastReloadError.issues[0].file).toBe(join(dir, 'hook-intake.json'));
    expect(s.lastReloadError.issues[0].message).toMatch(/JSON5/);
    expect(await messageOf('shaped')).toContain('version two 1');
  });

  it('keeps serving after a config edit that fails validation, naming the key path', async () => {
    const mark = srv.output().length;
    writeConfig([{ id: 'shaped', match: { path: 'shaped' }, action: 'wake', transform: { module: 'shape.ts' }, messageTemplat: 'typo' }]);
    await srv.waitFor('reload failed', undefined, mark);
    const s = await status();
    expect(s.lastReloadError.issues[0].path).toBe('hooks.mappings[0].messageTemplat');
    expect(s.lastReloadError.issues[0].message).toContain('did you mean "messageTemplate"');
    expect(await messageOf('shaped')).toContain('version two 1');
  });

  it('keeps serving after a transform edit with a syntax error, then goes live when it is fixed', async () => {
    const fixed = srv.output().length;
    writeConfig([{ id: 'shaped', match: { path: 'shaped' }, action: 'wake', transform: { module: 'shape.ts' } }]);
    await srv.waitFor('configuration reloaded', undefined, fixed);
    expect((await status()).lastReloadError).toBeNull();
    let mark = srv.output().length;
    writeTransform('shape.ts', `export default (ctx =>\n ({ text: 'broken' `);
    await srv.waitFor('reload failed', undefined, mark);
    // the parser stops at the end of the file, on its second line
    expect((await status()).lastReloadError.issues[0]).toMatchObject({ file: join(dir, 'transforms', 'shape.ts'), line: 2 });
    expectOneLine(failureLogged(mark), 2, /^cannot load: \S.*expected ","$/);
    expect(await messageOf('shaped')).toContain('version two 1');

    // one that throws while it loads: where, and what it threw
    mark = srv.output().length;
    writeTransform('shape.ts', `const at = 'load';\nthrow new Error('load-time failure');\n`);
    await srv.waitFor('reload failed', undefined, mark);
    expect((await status()).lastReloadError.issues[0]).toMatchObject({ line: 2, message: 'cannot load: load-time failure' });
    expectOneLine(failureLogged(mark), 2, /^cannot load: load-time failure$/);
    expect(await messageOf('shaped')).toContain('version two 1');
    writeTransform('shape.ts', `export default () => ({ text: 'version three' });`);
    await goesLive(async () => (await messageOf('shaped')).includes('version three'));
    expect((await status()).lastReloadError).toBeNull();
  });

  it('notices a deleted transform: the reload fails and the old generation keeps serving', async () => {
    const mark = srv.output().length;
    rmSync(join(dir, 'transforms', 'shape.ts'));
    await srv.waitFor('reload failed', undefined, mark);
    expect((await status()).lastReloadError.issues[0].message).toContain('not found');
    expect(await messageOf('shaped')).toContain('version three');
  });
});
