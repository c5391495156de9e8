/**
 * The last step before dispatch: the safety boundary goes around hook text
 * unless the hook opted out, and all actions of one request share one id.
 */
import { describe, expect, it } from 'vitest';
import { prepare, type Provenance, wakeKey } from '../../src/intake/prepare.ts';
import { wrapExternal } from '../../src/safety/boundary.ts';
import type { AgentAction, WakeAction } from '../../src/intake/actions.ts';

const wake: WakeAction = { kind: 'wake', text: 'disk almost full', mode: 'next-heartbeat' };
const agent: AgentAction = {
  kind: 'agent',
  message: 'Summarise the build log',
  name: 'CI',
  sessionKey: 'hook:ci',
  wakeMode: 'now',
  deliver: true,
  channel: 'last',
  to: null,
  model: 'echo/echo',
  thinking: null,
  timeoutSeconds: 600,
  agentId: 'main',
  sessionMode: 'persistent',
};
const untrusted: Provenance = { label: 'Webhook', origin: 'agent', trusted: false, nameTrusted: false, boundaryId: 'b0da0e1d' };

describe('prepare()', () => {
  it('wraps a wake text in the boundary and records its origin', () => {
    expect(prepare(wake, { ...untrusted, origin: 'wake' })).toEqual({
      kind: 'wake',
      text: wrapExternal('disk almost full', 'Webhook', 'b0da0e1d'),
      mode: 'next-heartbeat',
      origin: 'wake',
      coalesceKey: wakeKey('wake', 'disk almost full'),
    });
  });

  it('wraps an agent message and keeps every other field', () => {
    const p = prepare(agent, { ...untrusted, label: 'Email', origin: 'gmail', nameTrusted: true });
    expect(p).toEqual({
      ...agent,
      message: wrapExternal(agent.message, 'Email', 'b0da0e1d'),
      origin: 'gmail',
      label: 'Email',
      trusted: false,
      nameTrusted: true,
    });
    expect(p.kind === 'agent' && p.message).toContain(agent.message);
  });

  it('leaves the text alone for a hook that opted out (trusted)', () => {
    expect(prepare(wake, { ...untrusted, trusted: true })).toMatchObject({ text: 'disk almost full' });
    expect(prepare(agent, { ...untrusted, trusted: true })).toMatchObject({ message: 'Summarise the build log', trusted: true });
  });

  it('gives every action of one request the same boundary id', () => {
    const [a, b] = [prepare(wake, untrusted), prepare(agent, untrusted)];
    expect(a.kind === 'wake' && a.text).toContain('id="b0da0e1d"');
    expect(b.kind === 'agent' && b.message).toContain('id="b0da0e1d"');
  });

  it('cleans the name and label so they cannot break a summary line or a marker', () => {
    const p = prepare({ ...agent, name: 'CI\n"<<<x>>>"' }, { ...untrusted, label: 'Git\u0000Hub' });
    expect(p.kind === 'agent' && p.name).not.toMatch(/[\n"<>]/);
    expect(p.kind === 'agent' && p.label).not.toMatch(/\u0000/);
  });

  it('does not change the action it is given', () => {
    const copy = structuredClone(agent);
    prepare(agent, untrusted);
    expect(agent).toEqual(copy);
  });
});
