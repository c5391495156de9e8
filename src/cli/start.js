// The CLI proper, loaded by bin/hook-intake.js once it has checked the Node version. It runs the
// TypeScript sources directly: Node 24 strips types natively, no build step.
//
// Node's compile cache keeps each module's stripped source and compiled code on disk (in
// $NODE_COMPILE_CACHE, else <tmpdir>/node-compile-cache; NODE_DISABLE_COMPILE_CACHE=1 turns it
// off). A start whose modules are all in the cache never loads the type-stripping compiler, which
// otherwise stays resident for the life of the process (about 20 MB; docs/performance.md). So it
// is turned on before any TypeScript is imported: this file is JavaScript and imports TypeScript
// only dynamically.
import { enableCompileCache, flushCompileCache, constants } from 'node:module';

const cache = enableCompileCache?.();
const caching = cache?.status === constants.compileCacheStatus?.ENABLED || cache?.status === constants.compileCacheStatus?.ALREADY_ENABLED;
const { serveFlags, serveEnv, restartForCache, RESTARTED_ENV } = await import('./node-flags.ts');
const restarted = process.env[RESTARTED_ENV] === '1';
delete process.env[RESTARTED_ENV];

// `serve` runs with three V8 flags and a setting of the C allocator that keep resident memory lower
// (see docs/performance.md, "Memory"): the process replaces itself once (same pid) with them added,
// except those the operator already chose either way.
const args = process.argv.slice(2);
const flags = serveFlags(args, process.execArgv, process.env.NODE_OPTIONS);
const env = serveEnv(args, process.env);
if ((flags.length || env) && typeof process.execve === 'function') {
  try {
    process.execve(process.execPath, [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)], {
      ...process.env,
      ...env,
    });
  } catch {
    // the replacement failed (the process is still this one): serve with Node's defaults
  }
}

const { main } = await import('./main.ts');

// A first start (or the first after an upgrade, or after the cache was cleared) compiled the
// sources and so loaded the compiler: `serve` writes the cache out and replaces itself once more
// (same pid, nothing served yet), and the new image finds every module compiled.
if (restartForCache({ args, caching, restarted, loaded: process.moduleLoadList, canReplace: typeof process.execve === 'function' })) {
  try {
    flushCompileCache();
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
      ...process.env,
      [RESTARTED_ENV]: '1',
    });
  } catch {
    // serve with the compiler loaded
  }
}

main(args).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exitCode = 1;
  },
);
