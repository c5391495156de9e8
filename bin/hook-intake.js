#!/usr/bin/env node
// Runs the TypeScript sources directly: Node 24 strips types natively, no build step.
import { main } from '../src/cli/main.ts';

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exitCode = 1;
  },
);
