/**
 * The `webhook` channel's deliveries as a receiver checks them with
 * `standardwebhooks`, the Standard Webhooks project's own library: a delivery
 * verifies, and the same delivery replayed after the library's tolerance
 * (five minutes) or with another body does not.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { json, startStub, type HttpStub, type Recorded } from '../../test/helpers/http-stub.ts';
import { channelMessage, testGeneration } from '../../test/helpers/runtime.ts';

const SECRET = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
const NOW = Date.parse('2030-01-01T00:00:00Z');

const message = () => channelMessage();

const signedHeaders = (req: Recorded): Record<string, string> => ({
  'webhook-id': String(req.headers['webhook-id']),
  'webhook-timestamp': String(req.headers['webhook-timestamp']),
  'webhook-signature': String(req.headers['webhook-signature']),
});

describe('a receiver using the standardwebhooks library', () => {
  let stub: HttpStub;
  beforeAll(async () => {
    stub = await startStub((_req, res) => json(res, 200, {}));
  });
  afterAll(() => stub.close());
  afterEach(() => {
    stub.requests.length = 0;
    vi.useRealTimers();
  });

  /** Sends one message through a channel whose clock reads NOW, and returns what the receiver got. */
  async function deliver(secret: string): Promise<Recorded> {
    const gen = testGeneration({ channels: { out: { type: 'webhook', url: `${stub.url}/in`, secret } } }, { clock: () => NOW });
    await gen.channels.get('out')!.channel.send(message());
    return stub.requests.at(-1)!;
  }

  /** The library reads the receiver's time from Date.now(): only Date is faked, the sockets keep real timers. */
  const receiverTime = (ms: number) => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(ms);
  };

  it('verifies a delivery signed with a whsec_ secret, and refuses it replayed late or with another body', async () => {
    const req = await deliver(SECRET);
    const body = req.raw.toString('utf8');
    const wh = new Webhook(SECRET);
    receiverTime(NOW + 60_000);
    expect(wh.verify(body, signedHeaders(req))).toEqual({
      runId: 'run-1',
      deliveryId: 'd-1',
      to: 'ops',
      text: 'the reply',
      part: 1,
      parts: 1,
    });
    expect(() => wh.verify(body.replace('the reply', 'a forged reply'), signedHeaders(req))).toThrow('No matching signature found');
    receiverTime(NOW + 301_000);
    expect(() => wh.verify(body, signedHeaders(req))).toThrow('Message timestamp too old');
  });

  it('verifies a delivery signed with a plain secret given to the library as raw bytes', async () => {
    const plain = 'a plain shared secret';
    const req = await deliver(plain);
    receiverTime(NOW);
    expect(new Webhook(Buffer.from(plain, 'utf8'), { format: 'raw' }).verify(req.raw.toString('utf8'), signedHeaders(req))).toMatchObject({
      runId: 'run-1',
    });
    expect(() => new Webhook(SECRET).verify(req.raw.toString('utf8'), signedHeaders(req))).toThrow('No matching signature found');
  });
});
