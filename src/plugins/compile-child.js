// Compiles one module for jiti (see compiler.ts): reads jiti's transform options as JSON on stdin,
// writes the compiled code to stdout. A process of its own, so that the compiler's memory goes
// back to the system when it exits (a worker thread's stays with the process). Plain JavaScript,
// with Node's compile cache on, so that loading jiti and Babel costs little after the first time.
import { enableCompileCache } from 'node:module';
import { readFileSync, writeSync } from 'node:fs';

enableCompileCache?.();
const { createJiti } = await import('jiti');
const opts = JSON.parse(readFileSync(0, 'utf8'));
// fsCache off: the server's own jiti writes its cache; this one only compiles.
const jiti = createJiti(import.meta.url, { fsCache: false, moduleCache: false });
const code = jiti.transform(opts);
for (let buf = Buffer.from(code), off = 0; off < buf.length; ) off += writeSync(1, buf, off);
