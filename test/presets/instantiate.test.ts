/**
 * A source preset becomes one mapping from its entry in `hooks.presets` (docs/presets.md): its scheme
 * with the entry's secret, its path, the events it takes, where the reply goes; what the entry gets
 * wrong is an issue naming the option.
 */
import { describe, expect, it } from 'vitest';
import type { PresetDefinition } from '../../src/plugins/define.ts';
import { DEFAULT_MAX_CHARS, presetEntry, presetMappings } from '../../src/presets/instantiate.ts';

const source: PresetDefinition = {
  name: 'Acme',
  verify: 'hmac-sha256',
  verifyOptions: ['publicUrl'],
  event: '{{headers.x-acme-event}}',
  events: ['order.created', 'order.paid'],
  idempotencyKey: '{{id}}',
  transform: 'transform.ts',
};

describe('presetMappings()', () => {
  it('builds one mapping on the preset’s path, verified with the entry’s secret, with the preset’s event and key templates', () => {
    const { mappings, issues } = presetMappings(source, { name: 'acme', secret: 's3cret', publicUrl: 'https://h.example/hooks/acme' });
    expect(issues).toEqual([]);
    expect(mappings).toEqual([
      {
        id: 'acme',
        match: { path: 'acme' },
        action: 'agent',
        name: 'Acme',
        label: 'Acme',
        transform: { module: 'transform.ts' },
        maxChars: DEFAULT_MAX_CHARS,
        verify: { type: 'hmac-sha256', secret: 's3cret', publicUrl: 'https://h.example/hooks/acme' },
        event: '{{headers.x-acme-event}}',
        idempotencyKey: '{{id}}',
      },
    ]);
  });

  it('takes the common options: path, events, action, where the reply goes, the session key, maxChars, rotating secrets', () => {
    const { mappings, issues } = presetMappings(source, {
      name: 'acme',
      secrets: ['new', 'old'],
      path: '/acme-eu/',
      events: ['order.paid'],
      action: 'wake',
      channel: 'ops',
      to: 'C123',
      model: 'echo/echo',
      sessionKey: 'hook:acme:{{customer}}',
      maxChars: 500,
    });
    expect(issues).toEqual([]);
    expect(mappings[0]).toMatchObject({
      id: 'acme-eu',
      match: { path: 'acme-eu' },
      action: 'wake',
      events: ['order.paid'],
      channel: 'ops',
      to: 'C123',
      model: 'echo/echo',
      sessionKey: 'hook:acme:{{customer}}',
      maxChars: 500,
      verify: { type: 'hmac-sha256', secret: ['new', 'old'] },
    });
  });

  it.each([
    [{ name: 'acme' }, 'secret', 'is required: the "acme" preset checks the provider\'s signature (hmac-sha256)'],
    [{ name: 'acme', secret: 's', evnts: ['order.paid'] }, 'evnts', 'is not an option of the "acme" preset (did you mean "events"?)'],
    [
      { name: 'acme', secret: 's', events: ['order.payed'] },
      'events[0]',
      '"order.payed" is not an event type of the "acme" preset (did you mean "order.paid"?)',
    ],
    [{ name: 'acme', secret: 's', secrets: ['t'] }, 'secrets', 'give `secret` or `secrets`, not both'],
  ])('refuses %j: %s %s', (entry, path, message) => {
    const { mappings, issues } = presetMappings(source, entry);
    expect(mappings).toEqual([]);
    expect(issues).toContainEqual({ path, message });
  });

  it('refuses a secret for a preset whose credential is the hook token', () => {
    const { issues } = presetMappings({ ...source, verify: undefined }, { name: 'acme', secret: 's' });
    expect(issues).toEqual([{ path: 'secret', message: 'the "acme" preset has no signature to check: the hook token is its credential' }]);
  });

  it('checks a public-key scheme with the entry’s publicKey, and takes no secret for it', () => {
    const keyed: PresetDefinition = { ...source, verify: 'sendgrid', verifyOptions: ['publicKey'] };
    const { mappings, issues } = presetMappings(keyed, { name: 'acme', publicKey: 'MFkw' });
    expect(issues).toEqual([]);
    expect(mappings[0]!.verify).toEqual({ type: 'sendgrid', publicKey: 'MFkw' });
    expect(presetMappings(keyed, { name: 'acme' }).issues).toEqual([
      { path: 'publicKey', message: 'is required: the "acme" preset checks the provider\'s signature (sendgrid)' },
    ]);
    expect(presetMappings(keyed, { name: 'acme', publicKey: 'MFkw', secret: 's' }).issues).toEqual([
      { path: 'secret', message: 'the "acme" preset checks a signature with `publicKey`, not a secret' },
    ]);
  });

  it('refuses events for a preset that names no event type per request', () => {
    const batched: PresetDefinition = { ...source, event: undefined, events: undefined };
    expect(presetMappings(batched, { name: 'acme', secret: 's', events: ['bounce'] }).issues).toEqual([
      {
        path: 'events',
        message:
          'the "acme" preset names no event type per request (one delivery holds several): choose the events on the provider\'s side',
      },
    ]);
  });

  it('takes a preset of mappings as it is, and refuses options for it', () => {
    const mappings = [{ id: 'm', action: 'agent' as const }];
    expect(presetMappings({ mappings }, { name: 'gmail' })).toEqual({ mappings, issues: [] });
    expect(presetMappings({ mappings }, { name: 'gmail', path: 'mail' }).issues).toEqual([
      { path: 'path', message: 'the "gmail" preset takes no options (its settings have a section of their own)' },
    ]);
  });

  it('reads a bare name as the preset with its defaults', () => {
    expect(presetEntry('github')).toEqual({ name: 'github' });
    expect(presetEntry({ name: 'github', secret: 's' })).toEqual({ name: 'github', secret: 's' });
  });
});
