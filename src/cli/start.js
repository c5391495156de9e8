// The CLI proper, loaded by bin/hook-intake.js once it has checked the Node version (as
// dist/src/cli/start.js, compiled with the rest: docs/development.md, "Building").
//
// Node's compile cache keeps the code V8 compiled for each module on disk (in $NODE_COMPILE_CACHE,
// else <tmpdir>/node-compile-cache; NODE_DISABLE_COMPILE_CACHE=1 turns it off), so that a later
// start reads it instead of compiling again (docs/performance.md, "Memory"). It is turned on
// before the CLI's modules are imported: they are imported dynamically, after it.
import { enableCompileCache } from 'node:module';

enableCompileCache?.();
// `ps` and `top` show the process as hook-intake rather than node's MainThread
process.title = 'hook-intake';

const { main } = await import('./main.ts');

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exitCode = 1;
  },
);
