/**
 * The `postmark` preset over real HTTP, with the example of each of Postmark's webhook pages
 * (fixtures/SOURCES.md). Postmark signs nothing: it sends the credentials written into the webhook
 * URL as HTTP basic auth, as the tests do. Every example answered 202 with a short message, the
 * right credentials required (401 otherwise), a retry (the same JSON) a duplicate, `events` honoured.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const CREDENTIALS = 'postmark:hook-password-0123456789';
const FIXTURES = join(import.meta.dirname, 'fixtures');
const fixture = (name: string): Record<string, unknown> => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));
const ALL = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));

/** Postmark's request: JSON, and the URL's credentials as basic auth. */
const headers = (credentials = CREDENTIALS) => ({
  'content-type': 'application/json',
  authorization: `Basic ${Buffer.from(credentials).toString('base64')}`,
  'user-agent': 'Postmark',
});

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([
    { name: 'postmark', secret: CREDENTIALS },
    { name: 'postmark', path: 'postmark-bounces', secret: CREDENTIALS, events: ['Bounce', 'SpamComplaint'] },
  ]);
});
afterAll(() => hooks.close());

describe('the postmark preset', () => {
  it(`takes every published example (${ALL.length}), answering 202 with a short message`, async () => {
    for (const name of ALL) {
      const answer = await hooks.send('postmark', JSON.stringify(fixture(name)), headers());
      expect(answer.status, `${name}: ${answer.text}`).toBe(202);
      expectPresetMessage(await hooks.messageOf(answer));
    }
  });

  it('writes an inbound email as sender, subject and reply, in the session of that person', async () => {
    const answer = await hooks.send('postmark', JSON.stringify({ ...fixture('Inbound.json'), MessageID: 'inbound-exact' }), headers());
    expect(answer.body.sessionKey).toBe('hook:postmark:alanturing_computers.com');
    expect(inner(await hooks.messageOf(answer))).toBe(
      [
        'Email from Alan Turing <alanturing@computers.com> to Margaret Hamilton <yourhash+SampleHash@inbound.postmarkapp.com>: Saying Hello!',
        'Cc: Katherine Johnson <katherine@nasa.com>, dorothy@nasa.com',
        'This is the reply text',
        'Attachments: test.txt (text/plain, 45 bytes)',
        'Message inbound-exact',
        'Tag: welcome-email',
      ].join('\n'),
    );
    const bounce = await hooks.send('postmark', JSON.stringify({ ...fixture('Bounce.json'), ID: 1 }), headers());
    expect(bounce.body.sessionKey).toBe('hook:postmark:margareth_nasa.com');
    expect(inner(await hooks.messageOf(bounce)).split('\n')[0]).toBe('Email "Saying Hello!" to margareth@nasa.com bounced (Hard bounce)');
  });

  it('refuses wrong or missing credentials with 401, and answers a retry of the same event as a duplicate', async () => {
    const body = JSON.stringify({ ...fixture('Delivery.json'), DeliveredAt: '2026-11-06T10:00:00Z' });
    expect((await hooks.send('postmark', body, headers('postmark:wrong'))).status).toBe(401);
    expect((await hooks.send('postmark', body, { 'content-type': 'application/json' })).status).toBe(401);
    const first = await hooks.send('postmark', body, headers());
    const retry = await hooks.send('postmark', body, { ...headers(), 'x-pm-retries-remaining': '9' });
    expect(first.status).toBe(202);
    expect(retry.body).toEqual({ ...first.body, duplicate: true });
  });

  it('with events: [Bounce, SpamComplaint], takes a bounce and answers 204 to an open, keeping it', async () => {
    expect((await hooks.send('postmark-bounces', JSON.stringify({ ...fixture('Bounce.json'), ID: 2 }), headers())).status).toBe(202);
    expect((await hooks.send('postmark-bounces', JSON.stringify(fixture('Open.json')), headers())).status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'postmark-bounces');
    expect(kept).toMatchObject({ status: 204, mappingId: 'postmark-bounces' });
  });
});
