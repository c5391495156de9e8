/**
 * A real generation built from a config object, for unit tests of code that
 * reads one (actions, routes, the read API). Besides the built-in plugins it
 * registers `needs-to`, a channel that requires a recipient and splits long
 * texts, and `recording`, a channel without limits.
 */
import { ConfigError } from '../../src/errors.ts';
import { validateConfig } from '../../src/config/validate.ts';
import { applyRules } from '../../src/config/rules.ts';
import { buildGeneration, type Generation } from '../../src/runtime/generation.ts';
import { definePlugin } from '../../src/plugins/define.ts';
import { createLogger } from '../../src/log.ts';
import { builtinPlugins } from '../../plugins/index.ts';

export const testChannels = definePlugin({
  name: 'test-channels',
  channels: {
    'needs-to': { create: () => ({ limits: { requiresTo: true, maxTextLength: 100 }, send: async () => {} }) },
    recording: { create: () => ({ send: async () => {} }) },
  },
});

export const HOOK_TOKEN = 'hook-token-0123456789abcdef0123';
export const GATEWAY_TOKEN = 'gateway-token-0123456789abcdef01';

/** Validates `data` (defaults filled, rules applied) and builds a generation from it. */
export async function testGeneration(data: Record<string, unknown> = {}): Promise<Generation> {
  const file = 'test-config.json';
  const { config, issues } = validateConfig(structuredClone(data), file);
  if (!config) throw new ConfigError(issues);
  const warnings: string[] = [];
  const ruleIssues = applyRules(config, { file, dir: '/nonexistent', cwd: '/nonexistent', dataDir: '/nonexistent/data', warnings });
  if (ruleIssues.length) throw new ConfigError(ruleIssues);
  return buildGeneration({ file: undefined, dir: '/nonexistent', config, warnings, fallbackTokens: [] }, { builtins: [...builtinPlugins, testChannels], logger: createLogger('silent') });
}
