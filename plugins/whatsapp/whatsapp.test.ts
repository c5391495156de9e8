/**
 * The `whatsapp` channel against a stand-in Graph API that checks every
 * request against Meta's published WhatsApp Cloud API description: the
 * message it sends, rendering and splitting, how Graph error codes are
 * classified (the 24-hour window above all), and that the access token never
 * shows up in an error or a log line.
 */
import { describe, expect, it } from 'vitest';
import type { ChannelMessage } from 'hook-intake/plugin';
import { always, type Answer, type Script } from '../../test/helpers/provider-stub.ts';
import { whatsappSpec } from '../../test/helpers/provider-specs.ts';
import { captureLogger, channelMessage, testGeneration } from '../../test/helpers/runtime.ts';
import {
  caught,
  deliverParts,
  expectNoneOf,
  expectRefusedRetried,
  expectShutdownReason,
  expectSplit,
  shownOf,
  standInPerTest,
} from '../../test/helpers/channel-cases.ts';

const TOKEN = 'EAAGm0PX4ZCpsBAKZBs3cr3tT0k3nZZZ';
const PHONE_ID = '106540352242922';
const NOW = Date.parse('2030-01-01T00:00:00Z');
const SENT: Answer = {
  status: 200,
  json: { messaging_product: 'whatsapp', contacts: [{ input: '+15551234567', wa_id: '15551234567' }], messages: [{ id: 'wamid.X' }] },
};
const graphError = (status: number, code: number, message: string, details?: string, headers?: Record<string, string>): Answer => ({
  status,
  json: { error: { message, type: 'OAuthException', code, ...(details ? { error_data: { details } } : {}), fbtrace_id: 'A1' } },
  ...(headers ? { headers } : {}),
});

const standIn = standInPerTest(whatsappSpec());

const channelAt = (url: string, slice: Record<string, unknown> = {}, logger = captureLogger().logger) =>
  testGeneration(
    { channels: { whatsapp: { phoneNumberId: PHONE_ID, accessToken: TOKEN, apiBaseUrl: `${url}/v23.0`, ...slice } } },
    { clock: () => NOW, logger },
  ).channels.get('whatsapp')!.channel;

async function setup(script: Script, slice: Record<string, unknown> = {}) {
  const stub = await standIn(script);
  const log = captureLogger();
  return { channel: channelAt(stub.url, slice, log.logger), stub, log };
}

const msg = (over: Partial<ChannelMessage> = {}) => channelMessage({ to: '+15551234567', text: 'hello', ...over });

const to = (number: string) => (over: Partial<ChannelMessage>) => msg({ to: number, ...over });

describe('whatsapp channel: requests', () => {
  it('POSTs a text message with previews off and a Bearer token, as the Cloud API describes', async () => {
    const { channel, stub } = await setup(always(SENT));
    await deliverParts(channel, '**Done**: see [the report](https://example.com/r) <b>&</b>', to('+15551234567'));
    const [req] = stub.requests;
    expect(req!.method).toBe('POST');
    expect(req!.path).toBe(`/v23.0/${PHONE_ID}/messages`);
    expect(req!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(req!.body).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '+15551234567',
      type: 'text',
      text: { body: '*Done*: see the report (https://example.com/r) <b>&</b>', preview_url: false },
    });
    stub.expectClean();
  });

  it('splits a 9,000-character reply into parts under 4096, sent in order', async () => {
    const { channel, stub } = await setup(always(SENT));
    const reply = Array.from({ length: 60 }, (_, i) => `Paragraph ${i}: ${'lorem ipsum '.repeat(12)}`).join('\n\n');
    expect(reply.length).toBeGreaterThan(9000);
    const parts = await deliverParts(channel, reply, to('15551234567'));
    expect(stub.requests.map((r) => r.body.text.body)).toEqual(parts);
    expectSplit(parts, { limit: 4096, atLeast: 3, pieces: Array.from({ length: 60 }, (_, i) => `Paragraph ${i}:`) });
    stub.expectClean();
  });

  it('textChunkLimit lowers the split limit', async () => {
    const { channel } = await setup([], { textChunkLimit: 300 });
    expectSplit(channel.render!('word '.repeat(400)), { limit: 300, pieces: [] });
  });
});

describe('whatsapp channel: to', () => {
  it.each(['+15551234567', '15551234567', '+447911123456'])('accepts %s', async (to) => {
    const { channel } = await setup([]);
    expect(channel.checkTo!(to)).toBeUndefined();
  });
  it.each(['', '555-1234', '+0123456789', 'user@example.com', '+1555123456789012', '+1 555 123 4567'])(
    'rejects %j naming the form',
    async (to) => {
      const { channel } = await setup([]);
      expect(channel.checkTo!(to)).toMatch(/E\.164/);
    },
  );
});

describe('whatsapp channel: answers', () => {
  it('131047 is permanent, with a reason that names the 24-hour window', async () => {
    const { channel, stub } = await setup([
      graphError(
        400,
        131047,
        'Re-engagement message',
        'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
      ),
    ]);
    const err = await caught(channel.send(msg()));
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(
      /^WhatsApp 131047: outside the 24-hour customer service window, so only template messages can reach this person \(Re-engagement message: Message failed to send because more than 24 hours/,
    );
    // the outbox keeps 300 characters of a reason: the window is said within them
    expect(err.message.slice(0, 300)).toContain('only template messages can reach this person');
    expect(stub.requests).toHaveLength(1);
  });

  it.each([
    [400, 130429, 'Rate limit hit'],
    [400, 131056, '(Business Account, Consumer Account) pair rate limit hit'],
  ])('%i with code %i is rate limited', async (status, code, message) => {
    const { channel } = await setup([graphError(status, code, message, undefined, { 'retry-after': '30' })]);
    expect(await caught(channel.send(msg()))).toMatchObject({
      retryable: true,
      retryAfterMs: 30_000,
      message: `WhatsApp ${code}: ${message}`,
    });
  });

  it('HTTP 429 is rate limited, with Retry-After when given', async () => {
    const { channel } = await setup([
      { status: 429, text: 'slow down' },
      { status: 429, text: '', headers: { 'retry-after': '7' } },
    ]);
    expect(await caught(channel.send(msg()))).toMatchObject({ retryable: true, retryAfterMs: undefined });
    expect(await caught(channel.send(msg()))).toMatchObject({ retryable: true, retryAfterMs: 7000 });
  });

  it('5xx and Meta-side codes are transient', async () => {
    const { channel } = await setup([
      { status: 503, text: 'unavailable' },
      graphError(500, 131000, 'Something went wrong'),
      graphError(400, 2, 'Service temporarily unavailable'),
    ]);
    for (let i = 0; i < 3; i++) expect(await caught(channel.send(msg()))).toMatchObject({ retryable: true, ambiguous: false });
  });

  it.each([
    [400, 100, 'Invalid parameter'],
    [401, 190, 'Error validating access token: Session has expired'],
    [400, 131030, 'Recipient phone number not in allowed list'],
    [403, 200, 'Permissions error'],
  ])('%i with code %i is permanent with the code and text', async (status, code, message) => {
    const { channel } = await setup([graphError(status, code, message)]);
    expect(await caught(channel.send(msg()))).toMatchObject({ retryable: false, message: `WhatsApp ${code}: ${message}` });
  });

  it('a refused connection is transient: nothing was sent', async () => {
    await expectRefusedRetried((url) => channelAt(url).send(msg()), /could not connect/);
  });

  it('shutdown aborts the request with the shutdown reason, not a channel error', async () => {
    const { channel, stub } = await setup([{ hang: true }]);
    await expectShutdownReason(
      (signal) => channel.send(msg({ signal })),
      () => stub.requests.length === 1,
    );
  });

  it('no answer in time, or a reset after sending, is ambiguous', async () => {
    const { channel } = await setup([{ hang: true }, { destroy: true }], { timeoutMs: 150 });
    expect(await caught(channel.send(msg()))).toMatchObject({ retryable: true, ambiguous: true });
    expect(await caught(channel.send(msg()))).toMatchObject({ retryable: true, ambiguous: true });
  });

  it('the access token and the text appear in no error or log line', async () => {
    const echo = graphError(400, 100, `Invalid token ${TOKEN} for text hello`);
    const { channel, log } = await setup([echo, { status: 500, text: `Bearer ${TOKEN}` }, { destroy: true }]);
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) seen.push(shownOf(await caught(channel.send(msg()))));
    expectNoneOf(seen.join('\n') + log.text(), [TOKEN, 'text hello']);
  });
});
