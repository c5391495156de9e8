/**
 * For tests of the example transforms: the context a transform is called
 * with, built from a fixture in `transforms/fixtures/`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TransformContext } from '../../src/transforms/types.ts';
import { ROOT } from './cli.ts';

export const EXAMPLES_DIR = join(ROOT, 'transforms');

/** The parsed JSON of `transforms/fixtures/<name>`. */
export function fixture<P = unknown>(name: string): P {
  return JSON.parse(readFileSync(join(EXAMPLES_DIR, 'fixtures', name), 'utf8')) as P;
}

/** A context as the pipeline builds it, for calling a transform directly. */
export function context<P>(
  payload: P,
  opts: { path?: string; headers?: Record<string, string>; query?: Record<string, string> } = {},
): TransformContext<P> {
  const path = opts.path ?? 'hook';
  return {
    payload,
    headers: { 'content-type': 'application/json', ...opts.headers },
    query: opts.query ?? {},
    path,
    url: `/hooks/${path}`,
    now: '2026-11-20T12:00:00.000Z',
    action: { kind: 'agent', message: JSON.stringify(payload) },
  };
}
