/**
 * The `zoom` preset over real HTTP (docs/presets/zoom.md), with Zoom's published examples (its docs'
 * URL validation, its webhook sample's meeting.started) and examples rebuilt from its SDK's event
 * types (fixtures/: each names its source, `.reconstructed` when rebuilt), signed as Zoom documents and
 * as its own webhook sample checks (`x-zm-signature: v0=<hex>` over `v0:<timestamp>:<body>`): the URL
 * validation answered as Zoom requires and nothing stored; every event answered 202 with a short
 * message that is not JSON and shows no recording token or passcode; wrong signatures refused; a
 * retried delivery a duplicate; `events` honoured.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, presetFixtures } from '../../test/helpers/preset-fixtures.ts';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const SECRET = 'zoom-webhook-secret-token-0123';
const FIXTURES = presetFixtures(new URL('fixtures/', import.meta.url));
const fixture = (name: string): Fixture => FIXTURES.find((f) => f.name === name)!;
const EVENTS = FIXTURES.filter((f) => f.name !== 'endpoint.url_validation');

/** The headers Zoom sends, signed the way zoom/webhook-sample checks them. */
function headers(body: string, secret = SECRET) {
  const ts = String(Math.floor(Date.now() / 1000));
  return {
    'content-type': 'application/json; charset=utf-8',
    'x-zm-request-timestamp': ts,
    'x-zm-signature': `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`,
    'user-agent': 'Zoom Marketplace/1.0a',
  };
}

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([
    { name: 'zoom', secret: SECRET },
    { name: 'zoom', path: 'zoom-recordings', secret: SECRET, events: ['recording.completed', 'recording.transcript_completed'] },
  ]);
});
afterAll(() => hooks.close());

/** Sends a fixture with a fresh event_ts, so the examples sharing one are not duplicates of each other. */
const send = (f: Fixture, path = 'zoom', eventTs = Date.now() + Math.random()) => {
  const body = JSON.stringify({ ...f.payload, event_ts: eventTs });
  return hooks.send(path, body, headers(body));
};

describe('the zoom preset', () => {
  it("answers Zoom's URL validation with the plainToken and its HMAC, and stores nothing", async () => {
    for (const path of ['zoom', 'zoom-recordings']) {
      const body = JSON.stringify(fixture('endpoint.url_validation').payload);
      const answer = await hooks.send(path, body, headers(body));
      expect(answer.status).toBe(200);
      // encryptedToken as zoom/webhook-sample computes it: the hex HMAC-SHA256 of plainToken under the secret token
      expect(answer.body).toEqual({
        plainToken: 'qgg8vlvZRS6UYooatFL8Aw',
        encryptedToken: createHmac('sha256', SECRET).update('qgg8vlvZRS6UYooatFL8Aw').digest('hex'),
      });
    }
    const body = JSON.stringify(fixture('endpoint.url_validation').payload);
    expect((await hooks.send('zoom', body, headers(body, 'not-the-secret'))).status).toBe(401);
    expect((await hooks.requests()).filter((r) => r.status === 202)).toHaveLength(0);
  });

  it.each(EVENTS.map((f) => [`${f.name} (${f.source})`, f] as const))('takes %s', async (_name, f) => {
    const answer = await send(f);
    expect(answer.status, answer.text).toBe(202);
    const message = await hooks.messageOf(answer);
    expectPresetMessage(message);
    expect(inner(message)).not.toMatch(/\[object Object\]|xyz123|abJhbGci|rec\/download/);
  });

  it('writes who joined which meeting, and keeps a meeting and its recording in one session', async () => {
    const joined = await send(fixture('meeting.participant_joined.reconstructed'));
    expect(inner(await hooks.messageOf(joined))).toBe('Ana Lima <ana@example.com> joined meeting "Weekly planning" (ID 85746065432)');
    const recording = await send(fixture('recording.completed.reconstructed'));
    expect(inner(await hooks.messageOf(recording)).split('\n')[0]).toBe(
      'Recording of meeting "Weekly planning" (ID 85746065432) is ready: 2 files (3.2 MB)',
    );
    expect(joined.body.sessionKey).toBe('hook:zoom:4444AAAiAAAAAiAiAiiAii_');
    expect(recording.body.sessionKey).toBe(joined.body.sessionKey);
  });

  it('refuses a wrong or missing signature with 401, and answers a retried delivery as a duplicate', async () => {
    const body = JSON.stringify(fixture('meeting.started').payload);
    expect((await hooks.send('zoom', body, headers(body, 'not-the-secret'))).status).toBe(401);
    const { 'x-zm-signature': _s, ...unsigned } = headers(body);
    expect((await hooks.send('zoom', body, unsigned)).status).toBe(401);

    // Zoom signs each attempt afresh; the body, its event_ts included, is what repeats
    const first = await send(fixture('meeting.ended.reconstructed'), 'zoom', 1763653599999);
    const again = await send(fixture('meeting.ended.reconstructed'), 'zoom', 1763653599999);
    expect(first.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
  });

  it('with events: [recording.completed, recording.transcript_completed], answers 204 to a meeting start and keeps it', async () => {
    const answer = await send(fixture('meeting.started'), 'zoom-recordings');
    expect(answer.status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'zoom-recordings' && r.status === 204);
    expect(kept).toMatchObject({ status: 204, mappingId: 'zoom-recordings' });
  });
});
