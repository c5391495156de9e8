/**
 * The tokens of the runs and heartbeats this process finished, by agent and model, for `/metrics`
 * (`hook_intake_tokens_total`). Counted in memory once a run's outcome is stored, like the request
 * counter: each instance of a shared store counts the runs it carried out, and Prometheus sums them.
 */
import type { TokenUsage } from '../store/types.ts';

export interface TokenCount {
  agent: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
}

export class TokenTally {
  private readonly counts = new Map<string, TokenCount>();

  add(agent: string, model: string, usage: TokenUsage): void {
    const key = `${agent}\u0000${model}`;
    let c = this.counts.get(key);
    if (!c) {
      c = { agent, model, inputTokens: 0, outputTokens: 0 };
      this.counts.set(key, c);
    }
    c.inputTokens += usage.inputTokens;
    c.outputTokens += usage.outputTokens;
  }

  entries(): readonly TokenCount[] {
    return [...this.counts.values()];
  }
}
