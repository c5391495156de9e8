/**
 * The `echo` provider: the reply is the last user message, and the usage is estimated from lengths
 * (docs/runtime.md, "echo"): a quarter of the UTF-16 length, rounded up, of everything it was sent
 * and of its reply.
 */
import { describe, expect, it } from 'vitest';
import { agentRequest, testGeneration } from '../../test/helpers/runtime.ts';

const echo = () =>
  testGeneration({ agents: { defaults: { model: 'echo/echo' }, providers: { echo: { type: 'echo' } } } }).providers.get('echo')!;

describe('echo provider', () => {
  it('replies with the last user message', async () => {
    const messages = [
      { role: 'user' as const, content: 'first' },
      { role: 'assistant' as const, content: 'first' },
      { role: 'user' as const, content: 'second' },
    ];
    expect((await echo().run(agentRequest({ messages }))).text).toBe('second');
  });

  it('reports a quarter of the UTF-16 length, rounded up, of the whole transcript sent as input and of the reply as output', async () => {
    const messages = [
      { role: 'user' as const, content: 'abcde' }, // 5
      { role: 'assistant' as const, content: 'xyz' }, // 3
      { role: 'user' as const, content: '🙂 ok' }, // 5 code units: the emoji is two
    ];
    expect(await echo().run(agentRequest({ messages }))).toEqual({ text: '🙂 ok', usage: { inputTokens: 4, outputTokens: 2 } });
  });

  it('reports 0 tokens for an empty message, and 1 for one to four characters', async () => {
    const run = (content: string) => echo().run(agentRequest({ messages: [{ role: 'user', content }] }));
    expect((await run('')).usage).toEqual({ inputTokens: 0, outputTokens: 0 });
    expect((await run('a')).usage).toEqual({ inputTokens: 1, outputTokens: 1 });
    expect((await run('abcd')).usage).toEqual({ inputTokens: 1, outputTokens: 1 });
    expect((await run('abcde')).usage).toEqual({ inputTokens: 2, outputTokens: 2 });
  });
});
