/**
 * The registry: every kind of contribution is found by its type, a taken name
 * is refused without registering anything, and each contribution remembers the
 * module it came from.
 */
import { describe, expect, it } from 'vitest';
import { createRegistry, DuplicateRegistrationError } from '../../src/plugins/registry.ts';
import { definePlugin } from '../../src/plugins/define.ts';
import { signatureVerifiers } from '../../src/auth/verifiers.ts';

const verifier = { create: () => ({ verify: () => ({ ok: true as const }) }) };
const service = { create: () => ({}) };

describe('createRegistry()', () => {
  it('registers verifiers and services beside providers and channels', () => {
    const r = createRegistry();
    r.register(
      definePlugin({
        name: 'chat',
        verifiers: { ed25519: verifier },
        services: { relay: service },
        channels: { chat: { create: () => ({ send: async () => {} }) } },
      }),
      '/p/chat.ts',
      'key-1',
    );
    expect(r.verifier('ed25519')).toBe(verifier);
    expect(r.service('relay')).toBe(service);
    expect(r.verifierTypes()).toEqual(['ed25519']);
    expect(r.serviceTypes()).toEqual(['relay']);
    expect(r.moduleKey('verifier', 'ed25519')).toBe('key-1');
    expect(r.moduleKey('channel', 'chat')).toBe('key-1');
    expect(r.moduleKey('channel', 'nope')).toBeUndefined();
  });

  it("registers the HMAC schemes, the providers' and the chat services' verifiers", () => {
    const r = createRegistry();
    r.register(signatureVerifiers);
    expect(r.verifierTypes().sort()).toEqual([
      'calendly',
      'discord',
      'github',
      'gitlab',
      'hmac-sha256',
      'hubspot',
      'intercom',
      'jira',
      'linear',
      'mailgun',
      'mattermost',
      'meta',
      'paddle',
      'pagerduty',
      'postmark',
      'sendgrid',
      'sentry',
      'shopify',
      'slack',
      'standard-webhooks',
      'stripe',
      'telegram',
      'twilio',
      'typeform',
      'zoom',
    ]);
  });

  it('refuses a plugin claiming a taken verifier type, registering nothing of it', () => {
    const r = createRegistry();
    r.register(signatureVerifiers);
    const clash = definePlugin({ name: 'clash', services: { other: service }, verifiers: { github: verifier } });
    expect(() => r.register(clash, '/p/clash.ts')).toThrow(DuplicateRegistrationError);
    expect(() => r.register(clash, '/p/clash.ts')).toThrow(
      'plugin "clash" registers verifier "github", already registered by plugin "signatures"',
    );
    expect(r.service('other')).toBeUndefined();
    expect(r.plugins().map((p) => p.name)).toEqual(['signatures']);
  });

  it('dispose removes exactly what the plugin added', () => {
    const r = createRegistry();
    const dispose = r.register(definePlugin({ name: 'a', verifiers: { v: verifier }, services: { s: service } }));
    r.register(definePlugin({ name: 'b', services: { t: service } }));
    dispose();
    expect(r.verifierTypes()).toEqual([]);
    expect(r.serviceTypes()).toEqual(['t']);
  });
});
