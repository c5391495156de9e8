/**
 * Logs go to stdout asynchronously (batched writes); none may be lost when the
 * service stops on SIGTERM, and lines stay whole next to other stdout output.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cleanup, post, startCli, tempDir } from '../helpers/cli.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const config = {
  hooks: { enabled: true, token: HOOK },
  agents: { defaults: { heartbeat: { every: '0' } } },
};
const auth = { authorization: `Bearer ${HOOK}` };

describe('logging to stdout', () => {
  it('writes every request line, whole, before exiting on SIGTERM', async () => {
    const dir = tempDir();
    try {
      const srv = await startCli({ config, dir });
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) => post(`${srv.url}/hooks/wake`, { text: `line ${i}`, mode: 'next-heartbeat' }, auth)),
      );
      expect(answers.every((a) => a.status === 200)).toBe(true);
      expect(await srv.stop('SIGTERM')).toBe(0);

      const lines = srv
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'));
      const parsed = lines.map((l) => JSON.parse(l) as { msg?: string; eventId?: string });
      const logged = new Set(parsed.filter((l) => l.msg === 'request').map((l) => l.eventId));
      for (const a of answers) expect(logged.has(a.body.eventId)).toBe(true);
      expect(parsed.at(-1)?.msg).toBe('stopped');
    } finally {
      cleanup(dir);
    }
  });
});
