/**
 * GET /metrics: Prometheus text behind the gateway token, counting hook
 * answers by hook and status, with the runtime's gauges. The service runs in
 * this process (`startService()`), over a real socket.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { startService } from '../../src/service.ts';
import { cleanup, post, tempDir, until } from '../helpers/cli.ts';
import { testConfig } from '../helpers/runtime.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const GW = `gw_${randomBytes(18).toString('hex')}`;

const serve = (config: Record<string, unknown>, dir: string) =>
  startService({ load: () => testConfig(config, dir), logger: createLogger('silent'), port: 0, bind: '127.0.0.1', watch: false });

describe('GET /metrics', () => {
  it('answers Prometheus text with the gateway token, and counts hook answers by hook and status', async () => {
    const dir = tempDir();
    const srv = await serve(
      { gateway: { auth: { token: GW } }, hooks: { enabled: true, token: HOOK }, agents: { defaults: { heartbeat: { every: '0' } } } },
      dir,
    );
    try {
      const auth = { authorization: `Bearer ${HOOK}` };
      for (let i = 0; i < 3; i++)
        expect((await post(`${srv.url}/hooks/wake`, { text: `m${i}`, mode: 'next-heartbeat' }, auth)).status).toBe(200);
      expect((await post(`${srv.url}/hooks/agent`, { message: 'x', deliver: false, wakeMode: 'next-heartbeat' }, auth)).status).toBe(202);
      expect((await post(`${srv.url}/hooks/wake`, { text: 'x' }, { authorization: 'Bearer wrong' })).status).toBe(401);

      const refused = await fetch(`${srv.url}/metrics`);
      expect(refused.status).toBe(401);

      const text = await until(async () => {
        const res = await fetch(`${srv.url}/metrics`, { headers: { authorization: `Bearer ${GW}` } });
        expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
        const t = await res.text();
        return t.includes('hook_intake_runs{status="ok"} 1') ? t : undefined;
      });
      // the echo run's tokens: its usage as stored, counted for the main agent and its model
      const listed = (await (await fetch(`${srv.url}/api/runs`, { headers: { authorization: `Bearer ${GW}` } })).json()) as {
        runs: { message: string; usage: unknown }[];
      };
      const run = listed.runs[0]!;
      const tokens = Math.ceil(run.message.length / 4);
      expect(run.usage).toEqual({ inputTokens: tokens, outputTokens: tokens });
      const counted = await until(async () => {
        const t = await (await fetch(`${srv.url}/metrics`, { headers: { authorization: `Bearer ${GW}` } })).text();
        return t.includes('hook_intake_tokens_total{') ? t : undefined;
      });
      expect(counted).toContain(`hook_intake_tokens_total{agent="main",model="echo/echo",direction="input"} ${tokens}`);
      expect(counted).toContain(`hook_intake_tokens_total{agent="main",model="echo/echo",direction="output"} ${tokens}`);
      expect(text).toContain('hook_intake_requests_total{hook="wake",status="200"} 3');
      expect(text).toContain('hook_intake_requests_total{hook="agent",status="202"} 1');
      expect(text).toContain('hook_intake_requests_total{hook="",status="401"} 1');
      // three wakes and the run's summary, none consumed (no heartbeat)
      expect(text).toContain('hook_intake_events{status="pending"} 4');
      expect(text).toMatch(/hook_intake_generation \d+/);
      expect(text).toContain('hook_intake_reload_failed 0');
      expect(text).toContain('hook_intake_process_resident_memory_bytes');
      // a commit per request at least (they were sent one after another), and the run's
      const commits = Number(/^hook_intake_store_commit_seconds_count (\d+)$/m.exec(text)?.[1]);
      expect(commits).toBeGreaterThanOrEqual(4);
      expect(text).toContain(`hook_intake_store_commit_seconds_bucket{le="+Inf"} ${commits}`);
      expect(Number(/^hook_intake_store_commit_seconds_sum (\S+)$/m.exec(text)?.[1])).toBeGreaterThan(0);
      // no transforms in this configuration, so no pool
      expect(text).not.toContain('hook_intake_transform_pool{');
      expect(text).not.toContain(HOOK);
      expect(text).not.toContain(GW);
    } finally {
      await srv.stop();
      cleanup(dir);
    }
  });

  it("shows the serving configuration's transform pool", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'transforms'));
    writeFileSync(
      join(dir, 'transforms', 'shape.ts'),
      `export default (ctx: { payload: { n: number } }) => ({ text: 'n=' + ctx.payload.n });`,
    );
    writeFileSync(join(dir, 'transforms', 'stuck.mjs'), `export default () => { for (;;) {} };`);
    const mappings = [
      { id: 'shape', match: { path: 'shape' }, action: 'wake', transform: { module: 'shape.ts' } },
      { id: 'stuck', match: { path: 'stuck' }, action: 'wake', transform: { module: 'stuck.mjs', timeoutMs: 200 } },
    ];
    const srv = await serve(
      {
        gateway: { auth: { token: GW } },
        hooks: { enabled: true, token: HOOK, mappings },
        agents: { defaults: { heartbeat: { every: '0' } } },
      },
      dir,
    );
    try {
      expect((await post(`${srv.url}/hooks/shape`, { n: 1 }, { authorization: `Bearer ${HOOK}` })).status).toBe(200);
      const text = await (await fetch(`${srv.url}/metrics`, { headers: { authorization: `Bearer ${GW}` } })).text();
      expect(text).toContain('hook_intake_transform_pool{stat="workers"} 1');
      expect(text).toContain('hook_intake_transform_pool{stat="busy"} 0');
      expect(text).toContain('hook_intake_transform_pool{stat="queued"} 0');
      expect(text).toContain('hook_intake_transform_pool{stat="restarts"} 0');
      expect(text).toContain('hook_intake_transform_pool{stat="scaled_up"} 0');
      // a call past its deadline: its worker is terminated and replaced
      expect((await post(`${srv.url}/hooks/stuck`, {}, { authorization: `Bearer ${HOOK}` })).status).toBeGreaterThanOrEqual(500);
      await until(async () => {
        const t = await (await fetch(`${srv.url}/metrics`, { headers: { authorization: `Bearer ${GW}` } })).text();
        return t.includes('hook_intake_transform_pool{stat="restarts"} 1') && t.includes('hook_intake_transform_pool{stat="workers"} 1')
          ? t
          : undefined;
      });
    } finally {
      await srv.stop();
      cleanup(dir);
    }
  });
});
