/**
 * Plugin contributions in a running service: a verifier that is not an HMAC
 * (Ed25519 over timestamp + body, with a handshake answered directly), and a
 * service that submits actions through `ctx.dispatch` and is stopped at
 * shutdown.
 */
import { createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../src/service.ts';
import { definePlugin, PluginConfigError, Type, type StartContext, type VerifyOutcome } from '../../src/plugins/define.ts';
import { ConfigError } from '../../src/errors.ts';
import { builtinPlugins } from '../../plugins/index.ts';
import { createLogger } from '../../src/log.ts';
import { testConfig } from '../helpers/runtime.ts';
import { cleanup, get, tempDir } from '../helpers/cli.ts';

const HOOK = 'hook-token-0123456789abcdef0123';
const GW = 'gateway-token-0123456789abcdef01';

/** A Discord-style verifier: Ed25519 over `timestamp + body`, the key given as 64 hex digits; a PING is answered directly. */
const ed25519Plugin = definePlugin({
  name: 'ed25519-test',
  verifiers: {
    ed25519: {
      configSchema: Type.Object({ publicKey: Type.String() }, { additionalProperties: false }),
      create(options: { publicKey: string }) {
        if (!/^[0-9a-f]{64}$/i.test(options.publicKey)) throw new PluginConfigError('publicKey', 'must be 64 hex digits');
        const key: KeyObject = createPublicKey({
          key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(options.publicKey, 'hex').toString('base64url') },
          format: 'jwk',
        });
        return {
          verify(req): VerifyOutcome {
            const sig = req.headers['x-signature-ed25519'];
            const ts = req.headers['x-signature-timestamp'];
            if (typeof sig !== 'string' || typeof ts !== 'string' || !/^[0-9a-f]{128}$/i.test(sig))
              return { ok: false, reason: 'missing signature header' };
            if (!verify(null, Buffer.concat([Buffer.from(ts), req.rawBody]), key, Buffer.from(sig, 'hex')))
              return { ok: false, reason: 'no signature matches' };
            const isPing = (JSON.parse(Buffer.from(req.rawBody).toString('utf8')) as { type?: number }).type === 1;
            return isPing ? { ok: true, answer: { status: 200, body: { type: 1 } } } : { ok: true };
          },
        };
      },
    },
  },
});

const serviceEvents: string[] = [];
const answers: unknown[] = [];
const servicePlugin = definePlugin({
  name: 'relay-test',
  services: {
    relay: {
      create: () => ({
        async start(ctx: StartContext) {
          serviceEvents.push(`start ${(ctx.config as { greeting: string }).greeting}`);
          answers.push(await ctx.dispatch([{ kind: 'wake', text: 'from the relay', mode: 'next-heartbeat' }]));
          answers.push(await ctx.dispatch([{ kind: 'wake', txt: 'typo' }]).catch((e: Error) => e.message));
        },
        stop() {
          serviceEvents.push('stop');
        },
      }),
    },
  },
});

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const publicHex = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex');

function raw(verifyType = 'ed25519') {
  return {
    gateway: { auth: { token: GW } },
    hooks: {
      enabled: true,
      token: HOOK,
      mappings: [
        {
          id: 'discord',
          match: { path: 'discord' },
          action: 'wake',
          textTemplate: 'chat {{text}}',
          verify: { type: verifyType, publicKey: publicHex },
        },
      ],
    },
    agents: { defaults: { heartbeat: { every: '0' } } },
    services: { relay: { greeting: 'hi' } },
  };
}

const dir = tempDir('hook-intake-lifecycle-');
const start = (data: Record<string, unknown>, dataDir = dir) =>
  startService({
    load: () => testConfig(data, dataDir),
    logger: createLogger('silent'),
    port: 0,
    bind: '127.0.0.1',
    watch: false,
    builtins: [...builtinPlugins, ed25519Plugin, servicePlugin],
  });

function signed(body: unknown, key = privateKey) {
  const text = JSON.stringify(body);
  const ts = '1700000000';
  const sig = sign(null, Buffer.from(ts + text), key).toString('hex');
  return {
    method: 'POST',
    body: text,
    headers: { 'content-type': 'application/json', 'x-signature-ed25519': sig, 'x-signature-timestamp': ts },
  };
}

describe('plugin verifiers and services in a running service', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await start(raw());
  });
  afterAll(async () => {
    await svc?.stop();
    cleanup(dir);
  });

  it('accepts a request the Ed25519 verifier passes, without the hook token', async () => {
    const res = await fetch(`${svc.url}/hooks/discord`, signed({ type: 2, text: 'hello' }));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, eventId: expect.any(String) });
  });

  it('refuses a signature made with another key', async () => {
    const other = generateKeyPairSync('ed25519').privateKey;
    const res = await fetch(`${svc.url}/hooks/discord`, signed({ type: 2, text: 'forged' }, other));
    expect(res.status).toBe(401);
  });

  it('answers a handshake directly, storing nothing', async () => {
    const res = await fetch(`${svc.url}/hooks/discord`, signed({ type: 1 }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ type: 1 });
    const events = await get(`${svc.url}/api/main/events?limit=50`, GW);
    const texts = JSON.stringify(events.body);
    expect(texts).toContain('chat hello');
    expect(texts).not.toContain('forged');
  });

  it('starts a service with its config, whose dispatch stores like a hook request and validates like one', async () => {
    expect(serviceEvents[0]).toBe('start hi');
    expect(answers[0]).toMatchObject({ status: 200, body: { ok: true, mode: 'next-heartbeat' }, eventIds: [expect.any(String)] });
    expect(answers[1]).toBe('text: is required');
    const events = await get(`${svc.url}/api/main/events?limit=50`, GW);
    const relayed = (events.body.events as { source: string; text: string }[]).find((e) => e.text.includes('from the relay'));
    // wrapped in the safety boundary under the service's id, as a hook's content would be
    expect(relayed).toMatchObject({ source: 'service:relay' });
    expect(relayed!.text).not.toBe('from the relay');
  });

  it('refuses an unknown verify.type naming the registered verifiers', async () => {
    const err = await start(raw('ed2559')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const issue = (err as ConfigError).issues.find((i) => i.path === 'hooks.mappings[0].verify.type');
    expect(issue?.message).toMatch(/unknown verifier type "ed2559" \(did you mean "ed25519"\?\)/);
    expect(issue?.message).toContain('github');
  });

  it('stops the service at shutdown', async () => {
    const other = tempDir('hook-intake-lifecycle-');
    try {
      const again = await start(raw(), other);
      serviceEvents.length = 0;
      await again.stop();
      expect(serviceEvents).toEqual(['stop']);
    } finally {
      cleanup(other);
    }
  });
});
