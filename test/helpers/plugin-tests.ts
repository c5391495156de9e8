/**
 * What the built-in plugins' tests need of the service beyond the public plugin API
 * (`hook-intake/plugin`): a refused config's issues, an agent called as a run calls it, and the
 * verdict of a built-in verifier. They build on testGeneration (runtime.ts).
 */
import type { HeaderBag } from 'hook-intake/plugin';
import { compileVerifier, type VerifySpec } from '../../src/auth/signatures.ts';
import { ConfigError } from '../../src/errors.ts';
import { callAgent, Shutdown, type CallOptions, type CallResult } from '../../src/runtime/agent-call.ts';
import type { Generation } from '../../src/generation/types.ts';

/** What testGeneration returns: a configuration built with its plugin instances. */
export type { Generation };

/**
 * How `build` refuses its config: the error's message (what the operator reads) and its issues as
 * `path: message`. Undefined when it builds; any other error is thrown on.
 */
export function configRefusal(build: () => unknown): { message: string; issues: string[] } | undefined {
  try {
    build();
  } catch (err) {
    if (err instanceof ConfigError) return { message: err.message, issues: err.issues.map((i) => `${i.path}: ${i.message}`) };
    throw err;
  }
  return undefined;
}

/** The issues `build` refuses its config with, as `path: message`; none when it builds. */
export function configIssues(build: () => unknown): string[] {
  return configRefusal(build)?.issues ?? [];
}

/** Calls the generation's agent for `o.model` as a run does (its deadline, its outcome as the runner records it), with no shutdown. */
export function callAsRun(gen: Generation, o: Omit<CallOptions, 'shutdown'>): Promise<CallResult> {
  return callAgent(gen, { ...o, shutdown: new Shutdown() });
}

/** The verdict of a built-in verifier (`verify: {type, …}` of a mapping) on a request's headers and raw body at `nowMs`. */
export function verdictOf(verify: VerifySpec, headers: HeaderBag, rawBody: Uint8Array, nowMs: number) {
  return compileVerifier(verify)(headers, rawBody, nowMs);
}
