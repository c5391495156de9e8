/**
 * jiti's TypeScript compiler (Babel), run in a child process for each module
 * jiti's file cache does not hold yet.
 *
 * Once loaded, jiti's compiler stays in the process: megabytes of resident
 * memory for the server's whole life, for one compile at start or at a reload
 * (measured: docs/performance.md, "Memory"). A worker thread does not help: the
 * memory it touched stays with the process after it ends. jiti's `transform`
 * option is synchronous, and so is this: the loader waits for the child (a
 * fraction of a second a module). Nothing is started when a module is already in
 * jiti's cache, which is the case at every start but the first after an edit.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TransformOptions, TransformResult } from 'jiti';

const CHILD = fileURLToPath(new URL('./compile-child.js', import.meta.url));
/** How long one module may take, the child's start included, before its load fails. */
export const COMPILE_TIMEOUT_MS = 60_000;

/** jiti's `transform` option. What jiti passes is plain data as the loader uses it (no Babel plugins). */
export function compileInChild(opts: TransformOptions, timeoutMs = COMPILE_TIMEOUT_MS): TransformResult {
  const r = spawnSync(process.execPath, [CHILD], {
    input: JSON.stringify(opts),
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 256 * 1024 * 1024,
  });
  const what = opts.filename ?? 'a module';
  if (r.error) throw new Error(`cannot compile ${what}: ${r.error.message}`);
  if (r.status !== 0) {
    const reason = r.signal ? `ended by ${r.signal}` : `exited with ${r.status}`;
    const detail = lastLine(r.stderr);
    throw new Error(`cannot compile ${what}: the compiler ${reason}${detail ? `: ${detail}` : ''}`);
  }
  return { code: r.stdout };
}

function lastLine(text: string | undefined): string {
  const lines = (text ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return (lines.find((l) => /Error/.test(l)) ?? lines.at(-1) ?? '').slice(0, 500);
}
