/**
 * Building blocks for unit tests of the runtime and the plugins: a validated
 * config from a plain object, a generation with the built-in plugins (plus any
 * test plugins), and a logger whose output the test can read.
 */
import { tmpdir } from 'node:os';
import type { Logger } from 'pino';
import { validateConfig } from '../../src/config/validate.ts';
import { applyRules } from '../../src/config/rules.ts';
import type { LoadedConfig } from '../../src/config/load.ts';
import { ConfigError } from '../../src/errors.ts';
import { createLogger } from '../../src/log.ts';
import type { ChannelMessage, Plugin } from '../../src/plugins/define.ts';
import { createRegistry } from '../../src/plugins/registry.ts';
import { assembleGeneration } from '../../src/generation/build.ts';
import type { Generation } from '../../src/generation/types.ts';
import { builtinPlugins } from '../../plugins/index.ts';

/** Validates `raw` like a config file (defaults filled, rules applied). Throws `ConfigError`. */
export function testConfig(raw: Record<string, unknown>, dir = tmpdir()): LoadedConfig {
  const data = structuredClone(raw);
  const { config, issues } = validateConfig(data, 'test-config.json');
  if (!config) throw new ConfigError(issues);
  const warnings: string[] = [];
  const ruleIssues = applyRules(config, { file: 'test-config.json', dir, cwd: dir, dataDir: dir, warnings });
  if (ruleIssues.length) throw new ConfigError(ruleIssues);
  return { file: undefined, dir, config, warnings, fallbackTokens: [] };
}

export interface GenerationOptions {
  plugins?: Plugin[];
  fetch?: typeof fetch;
  env?: Record<string, string | undefined>;
  clock?: () => number;
  logger?: Logger;
}

/** A generation with the built-in plugins (plus `opts.plugins`) and no mappings, built synchronously. */
export function testGeneration(raw: Record<string, unknown>, opts: GenerationOptions = {}): Generation {
  const registry = createRegistry();
  for (const p of [...builtinPlugins, ...(opts.plugins ?? [])]) registry.register(p);
  return assembleGeneration(
    testConfig(raw),
    { registry, pipelines: [], sources: { files: [], dirs: [] } },
    {
      logger: opts.logger ?? createLogger('silent'),
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
      env: opts.env ?? {},
      ...(opts.clock ? { clock: opts.clock } : {}),
    },
  );
}

/** A logger at `level` that writes into memory. */
export function captureLogger(level = 'trace'): { logger: Logger; text(): string } {
  let out = '';
  const logger = createLogger(level, { write: (s: string) => void (out += s) });
  return { logger, text: () => out };
}

/** An AgentRequest-shaped object with defaults, for calling a provider directly. */
export function agentRequest(over: Partial<import('../../src/plugins/define.ts').AgentRequest> = {}) {
  return {
    runId: 'run-1',
    sessionKey: 'hook:test',
    model: 'default',
    thinking: null,
    messages: [{ role: 'user' as const, content: 'hello' }],
    instructions: null,
    signal: new AbortController().signal,
    timeoutMs: 10_000,
    ...over,
  };
}

let runSeq = 0;
/** A queued hook run with defaults, for writing straight into a store. */
export function newRun(over: Partial<import('../../src/store/types.ts').NewRun> = {}): import('../../src/store/types.ts').NewRun {
  runSeq++;
  return {
    id: `run-${runSeq}-${Math.random().toString(36).slice(2, 8)}`,
    kind: 'hook',
    hookName: 'Test',
    label: 'Webhook',
    trusted: true,
    nameTrusted: true,
    sessionKey: `hook:test-${runSeq}`,
    message: `message ${runSeq}`,
    model: 'echo/echo',
    thinking: null,
    timeoutSeconds: 30,
    wakeMode: 'next-heartbeat',
    deliver: true,
    channel: 'last',
    to: null,
    createdAt: Date.now(),
    agentId: 'main',
    sessionMode: 'persistent',
    ...over,
  };
}

/** Stores a run finished `ok` whose reply waits in the outbox for `channel`/`to`. */
export async function runAwaitingDelivery(
  store: import('../../src/store/roles.ts').Store,
  d: { channel: string; to?: string | null; text: string; mainSession?: boolean },
): Promise<{ runId: string; deliveryId: string }> {
  const run = newRun();
  await store.records.accept({ events: [], runs: [run] });
  await store.records.startRun(run.id, Date.now());
  const deliveryId = `delivery-${run.id}`;
  await store.records.finishRun({
    id: run.id,
    status: 'ok',
    finishedAt: Date.now(),
    reply: d.text,
    summary: d.text,
    error: null,
    messages: [],
    delivery: {
      kind: 'outbox',
      entry: {
        id: deliveryId,
        runId: run.id,
        channel: d.channel,
        to: d.to ?? null,
        text: d.text,
        createdAt: Date.now(),
        mainSession: d.mainSession ?? false,
      },
    },
  });
  return { runId: run.id, deliveryId };
}

export interface ScriptedCall {
  req: import('../../src/plugins/define.ts').AgentRequest;
  /** Answers with `text`, and the usage to report when given. */
  reply(text: string, usage?: unknown): void;
  /** Answers as a provider that handed the action to another gateway (`AgentReply.forwarded`). */
  forward(runId: string | null): void;
  fail(err: Error): void;
}

/**
 * A provider (type `scripted`) whose calls wait until the test answers them,
 * so tests decide exactly when each run finishes. `auto` answers at once.
 */
export function scriptedProvider(auto?: (req: import('../../src/plugins/define.ts').AgentRequest) => string) {
  const calls: ScriptedCall[] = [];
  let active = 0;
  let maxActive = 0;
  const waiters: (() => void)[] = [];
  const plugin: Plugin = {
    name: 'scripted-test',
    agents: {
      scripted: {
        create: () => ({
          run: (req) =>
            new Promise((resolve, reject) => {
              active++;
              maxActive = Math.max(maxActive, active);
              let ended = false;
              const end = () => {
                if (ended) return;
                ended = true;
                active--;
              };
              calls.push({
                req,
                reply: (text, usage) => {
                  end();
                  // usage as given, checked or not: the runtime's checks are under test
                  resolve(usage === undefined ? { text } : ({ text, usage } as { text: string }));
                },
                forward: (runId) => {
                  end();
                  resolve({ text: '', forwarded: { runId } });
                },
                fail: (err) => {
                  end();
                  reject(err);
                },
              });
              req.signal.addEventListener('abort', end, { once: true });
              for (const w of waiters.splice(0)) w();
              if (auto) calls.at(-1)!.reply(auto(req));
            }),
        }),
      },
    },
  };
  return {
    plugin,
    calls,
    active: () => active,
    maxActive: () => maxActive,
    /** Resolves once at least `n` calls have been made. */
    async waitForCalls(n: number, timeoutMs = 20_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (calls.length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} provider calls, got ${calls.length}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 50);
        });
      }
    },
  };
}

/** A one-part message as the outbox hands it to a channel's `send`. */
export const channelMessage = (over: Partial<ChannelMessage> = {}): ChannelMessage => ({
  runId: 'run-1',
  to: 'ops',
  text: 'the reply',
  deliveryId: 'd-1',
  part: 1,
  parts: 1,
  signal: new AbortController().signal,
  attempt: 1,
  ...over,
});
