#!/usr/bin/env node
// Runs the TypeScript sources directly: Node 24 strips types natively, no build step.
import { serveFlags } from '../src/cli/node-flags.ts';

// `serve` runs with a smaller young generation (see docs/performance.md): the process replaces
// itself once (same pid) with the flag added, unless the operator already chose a size.
const flags = serveFlags(process.argv.slice(2), process.execArgv, process.env.NODE_OPTIONS);
if (flags.length && typeof process.execve === 'function') {
  try {
    process.execve(process.execPath, [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)], process.env);
  } catch {
    // the replacement failed (the process is still this one): serve with Node's defaults
  }
}

const { main } = await import('../src/cli/main.ts');
main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exitCode = 1;
  },
);
