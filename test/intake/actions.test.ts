/**
 * Validation of wake and agent actions (docs/http.md, "POST {hooks.path}/wake" and
 * "POST {hooks.path}/agent"): defaults, every refused field with its `field` and code, models and
 * the session-key policy.
 */
import { describe, expect, it } from 'vitest';
import { toAgentAction, toWakeAction, MAX_WAKE_TEXT } from '../../src/intake/actions.ts';
import { HookError } from '../../src/errors.ts';
import { testGeneration } from '../helpers/generation.ts';

const gen = await testGeneration({
  agents: { defaults: { thinking: 'low', timeoutSeconds: 120 }, providers: { echo: { type: 'echo' }, spare: { type: 'echo' } } },
  channels: { console: {}, chat: { type: 'needs-to' } },
});
const limited = await testGeneration({
  agents: { defaults: { model: 'echo/echo', models: ['spare/small'] }, providers: { echo: { type: 'echo' }, spare: { type: 'echo' } } },
});
const closed = await testGeneration({ hooks: { allowRequestSessionKey: false } });
const prefixed = await testGeneration({ hooks: { allowedSessionKeyPrefixes: ['hook:', 'ci/'] } });

function refusal(fn: () => unknown): { status: number; code: string; field: string | undefined; message: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HookError);
    const e = err as HookError;
    return { status: e.status, code: e.code, field: e.field, message: e.message };
  }
  throw new Error('expected a HookError');
}

describe('toWakeAction()', () => {
  it.each([
    [{ text: 'disk full' }, { kind: 'wake', text: 'disk full', mode: 'now' }],
    [{ text: '  padded \n' }, { kind: 'wake', text: 'padded', mode: 'now' }],
    [
      { text: 'later', mode: 'next-heartbeat' },
      { kind: 'wake', text: 'later', mode: 'next-heartbeat' },
    ],
    [{ text: 'x'.repeat(MAX_WAKE_TEXT) }, { kind: 'wake', text: 'x'.repeat(MAX_WAKE_TEXT), mode: 'now' }],
  ])('%j → %j', (input, action) => {
    expect(toWakeAction(input)).toEqual(action);
  });

  it.each([
    ['null', null, '', 'the body must be a JSON object'],
    ['an array', [{ text: 'x' }], '', 'the body must be a JSON object'],
    ['a string', 'text', '', 'the body must be a JSON object'],
    ['no text', {}, 'text', 'text: is required'],
    ['a number as text', { text: 5 }, 'text', 'text: must be a string'],
    ['blank text', { text: ' \n\t ' }, 'text', 'text: must not be empty'],
    ['text over 20,000 characters', { text: 'x'.repeat(MAX_WAKE_TEXT + 1) }, 'text', 'text: must be at most 20000 characters'],
    ['an unknown mode', { text: 'x', mode: 'later' }, 'mode', 'mode: has an invalid value; allowed: "now", "next-heartbeat"'],
    ['a null mode', { text: 'x', mode: null }, 'mode', 'mode: must be a string'],
    ['an unknown field', { text: 'x', txt: 'y' }, 'txt', 'txt: unknown field (did you mean "text"?)'],
    ['a field unlike any known', { text: 'x', priority: 1 }, 'priority', 'priority: unknown field'],
  ])('refuses %s with 400 INVALID_PAYLOAD', (_what, input, field, message) => {
    expect(refusal(() => toWakeAction(input))).toEqual({ status: 400, code: 'INVALID_PAYLOAD', field, message });
  });
});

describe('toAgentAction()', () => {
  it('fills the defaults of an agent request and those of the config', () => {
    const action = toAgentAction({ message: '  Summarise the build log  ' }, gen, 'request');
    expect(action).toEqual({
      kind: 'agent',
      message: 'Summarise the build log',
      name: 'Hook',
      sessionKey: expect.stringMatching(/^hook:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      wakeMode: 'now',
      deliver: true,
      channel: 'last',
      to: null,
      model: 'echo/echo',
      thinking: 'low',
      timeoutSeconds: 120,
      agentId: 'main',
      sessionMode: 'persistent',
      // the key was made for this action: the runner knows its session has no transcript to read
      newSession: true,
    });
    expect(toAgentAction({ message: 'x' }, gen, 'request').sessionKey).not.toBe(action.sessionKey);
  });

  it('takes every field a caller may set', () => {
    const input = {
      message: 'm',
      name: ' CI ',
      sessionKey: 'hook:ci/build-42:step.1',
      wakeMode: 'next-heartbeat',
      deliver: false,
      channel: 'chat',
      to: '+4915',
      model: 'spare/large',
      thinking: 'high',
      timeoutSeconds: 86400,
      agentId: 'main',
      sessionMode: 'isolated',
    };
    expect(toAgentAction(input, gen, 'request')).toEqual({ kind: 'agent', ...input, name: 'CI' });
  });

  it('names a run "Hook" when the name is only whitespace', () => {
    expect(toAgentAction({ message: 'm', name: '   ' }, gen, 'request').name).toBe('Hook');
  });

  it('leaves thinking null when neither the request nor the config sets it', async () => {
    expect(toAgentAction({ message: 'm' }, await testGeneration(), 'request')).toMatchObject({ thinking: null, timeoutSeconds: 600 });
  });

  it.each([
    ['null', null, '', 'the body must be a JSON object'],
    ['no message', { name: 'x' }, 'message', 'message: is required'],
    ['a non-string message', { message: ['x'] }, 'message', 'message: must be a string'],
    ['a blank message', { message: '   ' }, 'message', 'message: must not be empty'],
    ['an empty name', { message: 'm', name: '' }, 'name', 'name: must not be empty'],
    ['a name over 200 characters', { message: 'm', name: 'n'.repeat(201) }, 'name', 'name: must be at most 200 characters'],
    [
      'a session key with a space',
      { message: 'm', sessionKey: 'hook:a b' },
      'sessionKey',
      'sessionKey: must be 1-200 characters of A-Z a-z 0-9 : . _ / -',
    ],
    [
      'an empty session key',
      { message: 'm', sessionKey: '' },
      'sessionKey',
      'sessionKey: must be 1-200 characters of A-Z a-z 0-9 : . _ / -',
    ],
    [
      'a session key over 200 characters',
      { message: 'm', sessionKey: 'k'.repeat(201) },
      'sessionKey',
      'sessionKey: must be 1-200 characters of A-Z a-z 0-9 : . _ / -',
    ],
    ['the main session', { message: 'm', sessionKey: 'main' }, 'sessionKey', 'sessionKey: must not name the main session'],
    ['the main session in capitals', { message: 'm', sessionKey: 'MAIN' }, 'sessionKey', 'sessionKey: must not name the main session'],
    ['a non-string session key', { message: 'm', sessionKey: 42 }, 'sessionKey', 'sessionKey: must be a string'],
    [
      'an unknown wakeMode',
      { message: 'm', wakeMode: 'soon' },
      'wakeMode',
      'wakeMode: has an invalid value; allowed: "now", "next-heartbeat"',
    ],
    ['deliver as a string', { message: 'm', deliver: 'true' }, 'deliver', 'deliver: must be a boolean'],
    [
      'waitForCompletion as a string',
      { message: 'm', waitForCompletion: 'yes' },
      'waitForCompletion',
      'waitForCompletion: must be a boolean',
    ],
    [
      'an unconfigured channel',
      { message: 'm', channel: 'telegram' },
      'channel',
      'channel: must be "last" or a configured channel (console, chat)',
    ],
    ['an empty channel', { message: 'm', channel: '' }, 'channel', 'channel: must not be empty'],
    ['an empty to', { message: 'm', to: '' }, 'to', 'to: must not be empty'],
    ['a numeric to', { message: 'm', to: 4915 }, 'to', 'to: must be a string'],
    ['a model without a provider', { message: 'm', model: 'gpt-4o' }, 'model', 'model: must have the form provider/model'],
    [
      'a model of an unknown provider',
      { message: 'm', model: 'openai/gpt-4o' },
      'model',
      'model: names a provider that is not configured; configured: echo, spare',
    ],
    [
      'an inherited name as provider',
      { message: 'm', model: 'constructor/x' },
      'model',
      'model: names a provider that is not configured; configured: echo, spare',
    ],
    [
      'an unknown thinking level',
      { message: 'm', thinking: 'max' },
      'thinking',
      'thinking: has an invalid value; allowed: "off", "minimal", "low", "medium", "high", "xhigh"',
    ],
    ['a zero timeout', { message: 'm', timeoutSeconds: 0 }, 'timeoutSeconds', 'timeoutSeconds: must be a positive number'],
    ['a negative timeout', { message: 'm', timeoutSeconds: -5 }, 'timeoutSeconds', 'timeoutSeconds: must be a positive number'],
    ['a timeout over a day', { message: 'm', timeoutSeconds: 86401 }, 'timeoutSeconds', 'timeoutSeconds: must be at most 86400'],
    ['a timeout as a string', { message: 'm', timeoutSeconds: '30' }, 'timeoutSeconds', 'timeoutSeconds: must be a number'],
    ['a misspelt field', { message: 'm', sessionkey: 'hook:x' }, 'sessionkey', 'sessionkey: unknown field (did you mean "sessionKey"?)'],
  ])('refuses %s with 400 INVALID_PAYLOAD', (_what, input, field, message) => {
    expect(refusal(() => toAgentAction(input, gen, 'request'))).toEqual({ status: 400, code: 'INVALID_PAYLOAD', field, message });
  });

  describe('a recipient the channel checks', () => {
    const numbered = testGeneration({ channels: { console: {}, tg: { type: 'numbered' } } });

    it("is refused when the channel says it has the wrong form, with the field and the channel's phrase, never the value", async () => {
      const g = await numbered;
      expect(refusal(() => toAgentAction({ message: 'm', channel: 'tg', to: 'SECRET-LOOKING-@name' }, g, 'mapping'))).toEqual({
        status: 400,
        code: 'INVALID_PAYLOAD',
        field: 'to',
        message: 'to: must be a chat number (123, -100…) for channel "tg"',
      });
    });

    it('is taken when it fits; with "last" or a channel that checks nothing, any recipient is taken at intake', async () => {
      const g = await numbered;
      expect(toAgentAction({ message: 'm', channel: 'tg', to: '-100123' }, g, 'request').to).toBe('-100123');
      expect(toAgentAction({ message: 'm', channel: 'last', to: 'anything' }, g, 'request').to).toBe('anything');
      expect(toAgentAction({ message: 'm', channel: 'console', to: 'anything' }, g, 'request').to).toBe('anything');
    });
  });

  describe('with agents.defaults.models', () => {
    it('accepts a listed model and the default model when none is asked for', () => {
      expect(toAgentAction({ message: 'm', model: 'spare/small' }, limited, 'request').model).toBe('spare/small');
      expect(toAgentAction({ message: 'm' }, limited, 'request').model).toBe('echo/echo');
    });

    it.each([['spare/large'], ['echo/echo']])('refuses %s with 400 MODEL_NOT_ALLOWED', (model) => {
      expect(refusal(() => toAgentAction({ message: 'm', model }, limited, 'request'))).toEqual({
        status: 400,
        code: 'MODEL_NOT_ALLOWED',
        field: 'model',
        message: 'model: is not one of agents.defaults.models',
      });
    });

    it('says a provider is not configured, naming the configured ones, rather than that the model is not listed', () => {
      expect(refusal(() => toAgentAction({ message: 'm', model: 'openai/gpt-5' }, limited, 'request'))).toEqual({
        status: 400,
        code: 'INVALID_PAYLOAD',
        field: 'model',
        message: 'model: names a provider that is not configured; configured: echo, spare',
      });
      expect(refusal(() => toAgentAction({ message: 'm', model: 'nonsense' }, limited, 'request'))).toMatchObject({
        code: 'INVALID_PAYLOAD',
        message: 'model: must have the form provider/model',
      });
    });
  });

  describe('a channel that cannot deliver without a recipient', () => {
    const chat = (route?: { channel: string; to?: string }) =>
      testGeneration({ channels: { console: {}, chat: { type: 'needs-to' } }, ...(route ? { session: { defaultRoute: route } } : {}) });

    it('is refused without `to` when no session.defaultRoute gives one for it, naming `to`', async () => {
      for (const g of [await chat(), await chat({ channel: 'console' }), await chat({ channel: 'chat' })]) {
        expect(refusal(() => toAgentAction({ message: 'm', channel: 'chat' }, g, 'request'))).toEqual({
          status: 400,
          code: 'INVALID_PAYLOAD',
          field: 'to',
          message: 'to: is required for channel "chat" (no session.defaultRoute gives one for it)',
        });
      }
    });

    it('is taken with a `to`, with a default route to it, or when nothing is delivered', async () => {
      expect(toAgentAction({ message: 'm', channel: 'chat', to: 'room' }, await chat(), 'request').to).toBe('room');
      expect(toAgentAction({ message: 'm', channel: 'chat' }, await chat({ channel: 'chat', to: 'room' }), 'request').to).toBeNull();
      expect(toAgentAction({ message: 'm', channel: 'chat', deliver: false }, await chat(), 'request').deliver).toBe(false);
    });
  });

  describe('session-key policy', () => {
    it("refuses a caller-chosen key when allowRequestSessionKey is false, but not a mapping's", () => {
      expect(refusal(() => toAgentAction({ message: 'm', sessionKey: 'hook:x' }, closed, 'request'))).toMatchObject({
        status: 400,
        field: 'sessionKey',
        message: 'sessionKey: is not accepted from requests (hooks.allowRequestSessionKey is false)',
      });
      expect(toAgentAction({ message: 'm', sessionKey: 'hook:x' }, closed, 'mapping').sessionKey).toBe('hook:x');
      expect(toAgentAction({ message: 'm' }, closed, 'request').sessionKey).toMatch(/^hook:/);
    });

    it.each([
      ['hook:abc', 'request', true],
      ['ci/build', 'request', true],
      ['other:abc', 'request', false],
      ['Hook:abc', 'request', false],
      ['other:abc', 'mapping', true],
    ] as const)('with allowed prefixes, %s from a %s is accepted: %s', (sessionKey, origin, accepted) => {
      const run = () => toAgentAction({ message: 'm', sessionKey }, prefixed, origin);
      if (accepted) expect(run().sessionKey).toBe(sessionKey);
      else expect(refusal(run)).toMatchObject({ field: 'sessionKey', message: 'sessionKey: must start with one of: "hook:", "ci/"' });
    });

    it('refuses the main session and malformed keys from mappings too', () => {
      expect(refusal(() => toAgentAction({ message: 'm', sessionKey: 'main' }, gen, 'mapping')).field).toBe('sessionKey');
      expect(refusal(() => toAgentAction({ message: 'm', sessionKey: 'a b' }, gen, 'mapping')).field).toBe('sessionKey');
    });
  });
});
