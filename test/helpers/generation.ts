/**
 * A real generation built from a config object, for unit tests of code that
 * reads one (actions, routes, the read API). Besides the built-in plugins it
 * registers `needs-to`, a channel that requires a recipient and splits long
 * texts, `recording`, a channel without limits, and `numbered`, whose recipients are numbers.
 */
import type { Generation } from '../../src/generation/types.ts';
import { testGeneration as buildTestGeneration } from './runtime.ts';
import { definePlugin } from '../../src/plugins/define.ts';

export const testChannels = definePlugin({
  name: 'test-channels',
  channels: {
    'needs-to': { create: () => ({ limits: { requiresTo: true, maxTextLength: 100 }, send: async () => {} }) },
    recording: { create: () => ({ send: async () => {} }) },
    numbered: {
      create: () => ({ checkTo: (to: string) => (/^-?\d+$/.test(to) ? undefined : 'a chat number (123, -100…)'), send: async () => {} }),
    },
  },
});

export const HOOK_TOKEN = 'hook-token-0123456789abcdef0123';
export const GATEWAY_TOKEN = 'gateway-token-0123456789abcdef01';

/** Validates `data` (defaults filled, rules applied) and builds a generation with the test channels. */
export async function testGeneration(data: Record<string, unknown> = {}): Promise<Generation> {
  return buildTestGeneration(data, { plugins: [testChannels] });
}
