/**
 * The `typeform` preset over real HTTP (docs/presets/typeform.md), with Typeform's published example
 * payload (fixtures/: it names its source), signed as Typeform documents (`Typeform-Signature:
 * sha256=<base64>`, the HMAC-SHA256 of the body with the webhook's secret): the response answered
 * 202 as its questions and answers in plain lines, never JSON; wrong signatures refused; a redelivered
 * event a duplicate; `events` honoured; an event type it does not know summarized.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presetFixtures } from '../../test/helpers/preset-fixtures.ts';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const SECRET = 'typeform-webhook-secret-0123';
const [EXAMPLE] = presetFixtures(new URL('fixtures/', import.meta.url));

function headers(body: string, secret = SECRET) {
  return {
    'content-type': 'application/json',
    'typeform-signature': `sha256=${createHmac('sha256', secret).update(body).digest('base64')}`,
    'user-agent': 'Typeform Webhooks',
  };
}

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([
    { name: 'typeform', secret: SECRET },
    { name: 'typeform', path: 'typeform-finished', secret: SECRET, events: ['form_response'] },
  ]);
});
afterAll(() => hooks.close());

const send = (payload: unknown, path = 'typeform') => {
  const body = JSON.stringify(payload);
  return hooks.send(path, body, headers(body));
};

describe('the typeform preset', () => {
  it(`writes the response to ${EXAMPLE!.source} as its questions and answers`, async () => {
    const answer = await send(EXAMPLE!.payload);
    expect(answer.status, answer.text).toBe(202);
    const message = await hooks.messageOf(answer);
    expectPresetMessage(message);
    const content = inner(message).split('\n');
    expect(content[0]).toBe('New response to "Webhooks example" (form lT4Z3j), submitted 2018-01-18 18:17 UTC, score 9');
    expect(content.slice(5, 7)).toEqual(['Q: What is your first name?', 'A: Laura']);
    expect(content).toContain('A: London, Sydney');
    expect(content).toContain('A: yes');
    expect(content).toHaveLength(1 + 2 * 12);
    expect(answer.body.sessionKey).toBe('hook:typeform:lT4Z3j:a3a12ec67a1365927098a606107fac15');
  });

  it('refuses a wrong or missing signature with 401, and answers a redelivered event as a duplicate', async () => {
    const body = JSON.stringify({ ...EXAMPLE!.payload, event_id: 'redelivered-0001' });
    expect((await hooks.send('typeform', body, headers(body, 'not-the-secret'))).status).toBe(401);
    expect((await hooks.send('typeform', body, { 'content-type': 'application/json' })).status).toBe(401);
    const first = await hooks.send('typeform', body, headers(body));
    const again = await hooks.send('typeform', body, headers(body));
    expect(first.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
  });

  it('with events: [form_response], answers 204 to a partial response and keeps it', async () => {
    // the published example as a partial response: Typeform sends the same shape with this event type
    const answer = await send({ ...EXAMPLE!.payload, event_id: 'partial-0001', event_type: 'form_response_partial' }, 'typeform-finished');
    expect(answer.status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'typeform-finished');
    expect(kept).toMatchObject({ status: 204, mappingId: 'typeform-finished' });
  });

  it('summarizes an event type it does not know instead of failing', async () => {
    // not a published payload: a made-up event type, to show the fallback
    const answer = await send({ event_id: 'other-0001', event_type: 'form_deleted', form_id: 'lT4Z3j' });
    expect(answer.status).toBe(202);
    expect(inner(await hooks.messageOf(answer))).toBe('Typeform event "form_deleted"\nform_id: lT4Z3j');
  });
});
