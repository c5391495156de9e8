/**
 * The `svix` preset over real HTTP (docs/presets/svix.md), with Clerk's, Resend's and Svix's
 * published examples (fixtures/: each names its source) signed by Svix's own library (`svix`), sent
 * with Svix's `svix-*` headers and with the Standard Webhooks `webhook-*` ones: every one answered 202
 * with a short message that is not JSON; wrong signatures refused; a redelivered message a duplicate;
 * `events` honoured.
 */
import { Webhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, presetFixtures } from '../../test/helpers/preset-fixtures.ts';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const FIXTURES = presetFixtures(new URL('fixtures/', import.meta.url));
const fixture = (name: string): Fixture => FIXTURES.find((f) => f.name === name)!;
const newId = () => `msg_${crypto.randomUUID().replace(/-/g, '')}`;

/** The headers a Svix sender puts on a delivery (`svix-*`), or a Standard Webhooks sender (`webhook-*`). */
function headers(body: string, id = newId(), prefix: 'svix' | 'webhook' = 'svix', secret = SECRET) {
  const now = new Date();
  return {
    'content-type': 'application/json',
    [`${prefix}-id`]: id,
    [`${prefix}-timestamp`]: String(Math.floor(now.getTime() / 1000)),
    [`${prefix}-signature`]: new Webhook(secret).sign(id, now, body),
  };
}

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([
    { name: 'svix', path: 'clerk', secret: SECRET },
    { name: 'svix', path: 'resend', secret: SECRET, events: ['email.bounced', 'email.complained'] },
  ]);
});
afterAll(() => hooks.close());

const send = (path: string, payload: unknown, prefix: 'svix' | 'webhook' = 'svix') => {
  const body = JSON.stringify(payload);
  return hooks.send(path, body, headers(body, newId(), prefix));
};

describe('the svix preset', () => {
  it.each(FIXTURES.map((f) => [`${f.name} (${f.source})`, f] as const))('takes %s', async (_name, f) => {
    for (const prefix of ['svix', 'webhook'] as const) {
      const answer = await send('clerk', f.payload, prefix);
      expect(answer.status, `${prefix}-*: ${answer.text}`).toBe(202);
      const message = await hooks.messageOf(answer);
      expectPresetMessage(message);
      expect(inner(message)).not.toContain('[object Object]');
    }
  });

  it("writes Clerk's new user and Resend's bounce, each in a session of its own thing", async () => {
    const user = await send('clerk', fixture('clerk.user.created').payload);
    expect(inner(await hooks.messageOf(user))).toBe(
      'Clerk user created: Example Example <example@example.org> (user_29w83sxmDNGwOuEthce5gg56FcC)',
    );
    expect(user.body.sessionKey).toBe('hook:svix:clerk:user_29w83sxmDNGwOuEthce5gg56FcC');

    const bounce = await send('resend', fixture('resend.email.bounced').payload);
    expect(inner(await hooks.messageOf(bounce))).toBe(
      [
        'Email "Bounced Email" to invalid@example.com bounced (from sender@example.com)',
        'Bounce: hard, permanent: Mailbox not found',
        '550 5.1.1 User unknown',
        'https://resend.com/emails/em_bounce123',
      ].join('\n'),
    );
    expect(bounce.body.sessionKey).toBe('hook:svix:resend:em_bounce123');
  });

  it("gives another sender's event its type and a summary", async () => {
    const answer = await send('clerk', fixture('svix.user.created').payload);
    expect(inner(await hooks.messageOf(answer))).toBe('Webhook event "user.created"\nemail: test@example.com\nusername: test_user');
  });

  it('refuses a wrong or missing signature with 401, and answers a redelivered message as a duplicate', async () => {
    const body = JSON.stringify(fixture('clerk.user.created').payload);
    expect((await hooks.send('clerk', body, headers(body, newId(), 'svix', 'whsec_QUJDREVGR0hJSktMTU5PUFFSU1RVVldY'))).status).toBe(401);
    const { 'svix-signature': _s, ...unsigned } = headers(body);
    expect((await hooks.send('clerk', body, unsigned)).status).toBe(401);

    // Svix signs each attempt afresh; the message id is what repeats
    const id = newId();
    const first = await hooks.send('clerk', body, headers(body, id));
    const again = await hooks.send('clerk', body, headers(body, id));
    expect(first.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
  });

  it('with events: [email.bounced, email.complained], answers 204 to a delivered email and keeps it', async () => {
    const answer = await send('resend', fixture('resend.email.delivered').payload);
    expect(answer.status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'resend' && r.status === 204);
    expect(kept).toMatchObject({ status: 204, mappingId: 'resend' });
  });
});
