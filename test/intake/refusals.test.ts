/** The request log of refusals is bounded: at most REFUSALS_PER_MINUTE a minute per process, the rest counted. */
import { describe, expect, it } from 'vitest';
import { errors } from '../../src/errors.ts';
import type { Dispatcher, KeepRequest } from '../../src/intake/dispatch.ts';
import { REFUSALS_PER_MINUTE, RefusalLog, type Refused } from '../../src/intake/refusals.ts';
import { captureLogger, testGeneration } from '../helpers/runtime.ts';

const gen = testGeneration({ hooks: { enabled: true, token: 'hook-token-0123456789abcdef0123' } });
const refused = (receivedAt: number, body?: Buffer): Refused => ({
  hook: 'github',
  mappingId: null,
  url: '/hooks/github',
  headers: { 'x-hub-signature-256': 'sha256=00', 'content-type': 'application/json' },
  body,
  bodyBytes: 42,
  receivedAt,
});

function log() {
  const kept: [KeepRequest, number, string][] = [];
  const dispatcher = { keepRefused: async (k: KeepRequest, s: number, r: string) => (kept.push([k, s, r]), 'id') } as unknown as Dispatcher;
  const out = captureLogger('info');
  return { kept, refusals: new RefusalLog(dispatcher, out.logger), text: out.text };
}

describe('RefusalLog', () => {
  it('keeps a refusal with its status, code, headers without credentials and size, no body unless given', () => {
    const { kept, refusals } = log();
    refusals.keep(gen, refused(0), errors.invalidSignature());
    expect(kept).toHaveLength(1);
    const [k, status, reason] = kept[0]!;
    expect([status, reason]).toEqual([401, 'INVALID_SIGNATURE']);
    expect(k).toMatchObject({ hook: 'github', bodyBytes: 42, headers: { 'content-type': 'application/json' } });
    expect(k.body.byteLength).toBe(0);
    refusals.keep(gen, refused(1, Buffer.from('{"a":1}')), errors.transformFailed(new Error('x')));
    expect(kept[1]![0]).toMatchObject({ bodyBytes: 7 });
  });

  it(`keeps at most ${REFUSALS_PER_MINUTE} a minute, counts the rest in one line, and starts over the next minute`, () => {
    const { kept, refusals, text } = log();
    for (let i = 0; i < REFUSALS_PER_MINUTE + 25; i++) refusals.keep(gen, refused(1000 + i), errors.unauthorized());
    expect(kept).toHaveLength(REFUSALS_PER_MINUTE);
    refusals.keep(gen, refused(61_000), errors.unauthorized());
    expect(kept).toHaveLength(REFUSALS_PER_MINUTE + 1);
    expect(text()).toContain('"notKept":25');
  });

  it('keeps nothing when the request log is off, nor what is not about a hook (the store down, a stop)', () => {
    const { kept, refusals } = log();
    refusals.keep(testGeneration({ retention: { requestsDays: 0 } }), refused(0), errors.unauthorized());
    refusals.keep(gen, refused(0), errors.storageUnavailable(new Error('disk full'), 30));
    expect(kept).toEqual([]);
  });
});
