/**
 * Named hooks: the first pipeline whose match passes owns the request (docs/mappings.md, "Match").
 * `explainMatch` is the same walk for a dry run, with the reason each earlier pipeline did not match.
 */
import type { MatchInput } from './match.ts';
import type { Pipeline } from './pipeline.ts';

/** What the walk reads of a generation: its compiled pipelines, in order. */
export interface Pipelines {
  readonly pipelines: readonly Pipeline[];
}

export function findPipeline(gen: Pipelines, req: MatchInput): Pipeline | undefined {
  for (const p of gen.pipelines) if (p.matcher.test(req)) return p;
  return undefined;
}

export interface MatchExplanation {
  id: string;
  origin: string;
  matched: boolean;
  /** Why it did not match (undefined for the one that did). */
  reason?: string;
}

/** Walks the pipelines in order up to the first match, saying why each earlier one failed. */
export function explainMatch(gen: Pipelines, input: MatchInput): MatchExplanation[] {
  const out: MatchExplanation[] = [];
  for (const p of gen.pipelines) {
    const reason = p.matcher.explain(input);
    if (reason === undefined) {
      out.push({ id: p.id, origin: p.origin, matched: true });
      break;
    }
    out.push({ id: p.id, origin: p.origin, matched: false, reason });
  }
  return out;
}
