/**
 * GET /metrics: Prometheus text behind the gateway token, counting hook
 * answers by hook and status, with the runtime's gauges.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cleanup, post, startCli, until } from '../helpers/cli.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const GW = `gw_${randomBytes(18).toString('hex')}`;

describe('GET /metrics', () => {
  it('answers Prometheus text with the gateway token, and counts hook answers by hook and status', async () => {
    const srv = await startCli({ config: { gateway: { auth: { token: GW } }, hooks: { enabled: true, token: HOOK }, agents: { defaults: { heartbeat: { every: '0' } } } } });
    try {
      const auth = { authorization: `Bearer ${HOOK}` };
      for (let i = 0; i < 3; i++) expect((await post(`${srv.url}/hooks/wake`, { text: `m${i}`, mode: 'next-heartbeat' }, auth)).status).toBe(200);
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
      expect(text).toContain('hook_intake_requests_total{hook="wake",status="200"} 3');
      expect(text).toContain('hook_intake_requests_total{hook="agent",status="202"} 1');
      expect(text).toContain('hook_intake_requests_total{hook="",status="401"} 1');
      // three wakes and the run's summary, none consumed (no heartbeat)
      expect(text).toContain('hook_intake_events{status="pending"} 4');
      expect(text).toMatch(/hook_intake_generation \d+/);
      expect(text).toContain('hook_intake_reload_failed 0');
      expect(text).toContain('hook_intake_process_resident_memory_bytes');
      expect(text).not.toContain(HOOK);
      expect(text).not.toContain(GW);
    } finally {
      await srv.stop();
      cleanup(srv.dir);
    }
  });
});
