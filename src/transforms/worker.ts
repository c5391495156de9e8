/**
 * A transform worker: starts idle, then an `init` message hands it a
 * generation's transform modules, which it loads with Node's own loader, or
 * jiti for what that cannot load (TS and ESM/CJS, no build step); then it runs
 * calls one at a time. The main thread
 * terminates a worker whose call passes its deadline, which is the only way to
 * stop a transform stuck in a synchronous loop without freezing the server.
 */
import { stripTypeScriptTypes } from 'node:module';
import { pathToFileURL } from 'node:url';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type { Jiti } from 'jiti';
import { compileInChild } from '../plugins/compiler.ts';
import { loadFailure, withoutJsonInput } from './error-text.ts';
import { TakenBack } from './taken-back.ts';
import type { LoadIssue } from './calls.ts';

interface Spec {
  key: string;
  file: string;
  exportName?: string;
}
type Fn = (ctx: unknown) => unknown;

const port = parentPort!;
// Node's own loader first: it strips TypeScript types natively, and with the compile cache that
// worker-entry.js turns on, a module already seen costs no compiler at all. A reload starts new workers,
// so its module cache never serves an old version. jiti, loaded only when Node's loader fails, handles
// what Node cannot load (enums, extensionless imports…): a fresh instance per worker without module cache,
// its transformer run in a child process (compiler.ts) for the modules jiti's file cache does not hold, as
// the memory a worker touched stays with the process. A worker that never needs jiti does not load it
// (measured: docs/performance.md, "Memory").
let jiti: Jiti | undefined;
async function load(file: string): Promise<Record<string, unknown> | Fn> {
  try {
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch {
    // as jiti's own `tryNative` does: any failure, then jiti (a module that throws, throws again there)
    jiti ??= (await import('jiti')).createJiti(import.meta.url, {
      moduleCache: false,
      requireCache: false,
      interopDefault: false,
      tryNative: false,
      transform: (opts) => compileInChild(opts),
    });
    return (await jiti.import(file)) as Record<string, unknown> | Fn;
  }
}
const fns = new Map<string, Fn>();

function pick(mod: Record<string, unknown> | Fn, exportName: string | undefined): Fn | string {
  if (exportName) {
    const f = (mod as Record<string, unknown>)[exportName];
    return typeof f === 'function' ? (f as Fn) : `has no function export "${exportName}"`;
  }
  if (typeof mod === 'function') return mod;
  const d = mod.default;
  if (typeof d === 'function') return d as Fn;
  // CJS `module.exports = { transform }` arrives as default
  if (d && typeof d === 'object' && typeof (d as Record<string, unknown>).transform === 'function')
    return (d as Record<string, Fn>).transform!;
  if (typeof mod.transform === 'function') return mod.transform as Fn;
  return 'exports neither a default function nor a function named "transform"';
}

async function init(specs: Spec[]): Promise<LoadIssue[]> {
  const errors: LoadIssue[] = [];
  for (const s of specs) {
    try {
      const mod = await load(s.file);
      const fn = pick(mod, s.exportName);
      if (typeof fn === 'string') errors.push({ key: s.key, message: fn });
      else fns.set(s.key, fn);
    } catch (err) {
      const failure = loadFailure(err, s.file);
      errors.push({ key: s.key, ...failure, message: `cannot load: ${failure.message}`.slice(0, 2000) });
    }
  }
  return errors;
}

interface Call {
  id: number;
  key: string;
  calls: Record<string, unknown>[];
  /** The body as JSON text: parsed here into each context's `payload`. */
  json?: string;
  /** Fields of each context's `action` that default to the JSON of the body: computed when read. */
  deferred?: string[];
}
type Message =
  | { type: 'calls'; jobs: Call[] }
  | { type: 'init'; specs: Spec[]; takenBack: SharedArrayBuffer; replies: MessagePort }
  | { type: 'warm' };

/** Shared with the pool: the range of call ids taken back (given to another worker), to skip (see `TakenBack`). */
let takenBack = new BigInt64Array(new SharedArrayBuffer(TakenBack.length * BigInt64Array.BYTES_PER_ELEMENT));
/** Where calls are answered: a port of their own, which the pool drains without an event per answer. */
let replies: MessagePort = port;

// Calls run strictly one after another, in the order they came (even async ones): the pool may
// send several ahead, and when one is stuck it knows that the ones behind it never started.
let chain: Promise<void> = Promise.resolve();
port.on('message', (m: Message) => {
  if (m.type === 'init') chain = chain.then(() => start(m.specs, m.takenBack, m.replies));
  else if (m.type === 'warm') warmTypeStripper();
  else for (const c of m.jobs) chain = chain.then(() => call(c));
});

async function start(specs: Spec[], shared: SharedArrayBuffer, answers: MessagePort): Promise<void> {
  takenBack = new BigInt64Array(shared);
  replies = answers;
  const errors = await init(specs);
  port.postMessage(errors.length ? { type: 'init-error', errors } : { type: 'ready' });
}

async function call(m: Call): Promise<void> {
  // THROUGH before FROM: the pool writes FROM first, so a range read while it changes is never wider than either
  const through = Atomics.load(takenBack, TakenBack.THROUGH);
  const from = Atomics.load(takenBack, TakenBack.FROM);
  const id = BigInt(m.id);
  if (id >= from && id <= through) return;
  const fn = fns.get(m.key);
  try {
    if (!fn) throw new Error(`transform ${m.key} is not loaded`);
    if (m.json !== undefined) withBody(m.calls, m.json, m.deferred);
    const results: unknown[] = [];
    for (const ctx of m.calls) results.push(await fn(ctx));
    try {
      replies.postMessage({ type: 'result', id: m.id, results });
    } catch (err) {
      replies.postMessage({
        type: 'error',
        id: m.id,
        message: `the transform returned a value that is not plain data: ${(err as Error).message}`,
      });
    }
  } catch (err) {
    const e = err as Error;
    const message = String(e?.message ?? err);
    const shown = withoutJsonInput(message);
    const stack = e?.stack?.split('\n').slice(0, 8).join('\n');
    replies.postMessage({
      type: 'error',
      id: m.id,
      message: shown.slice(0, 2000),
      stack: shown === message ? stack : stack?.replace(message, shown),
    });
  }
}

/** On an action with deferred fields: the body's text they are computed from (not enumerable, so never copied). */
const BODY = Symbol('body');
type Deferring = Record<string | symbol, unknown> & { [BODY]: string };

/** The last body computed as a default (calls run one at a time, so this is the call's). */
let lastBody: string | undefined;
let lastDefault = '';
function bodyDefault(json: string): string {
  if (json !== lastBody) {
    lastDefault = JSON.stringify(JSON.parse(json));
    lastBody = json;
  }
  return lastDefault;
}

/**
 * One accessor per deferred field name, shared by every action, which then share one hidden class. A
 * getter made per call (a closure over the body) would give each action a hidden class of its own; V8
 * keeps hidden classes in the old generation, and each would keep its call's objects alive past their
 * scavenges until the next full collection (measured: docs/performance.md, "Ids, deadlines and collections").
 */
const accessors = new Map<string, PropertyDescriptor>();
function deferredAccessor(field: string): PropertyDescriptor {
  let d = accessors.get(field);
  if (!d) {
    d = {
      enumerable: true,
      configurable: true,
      get(this: Deferring) {
        return bodyDefault(this[BODY]);
      },
      set(this: object, value: unknown) {
        Object.defineProperty(this, field, { value, writable: true, enumerable: true, configurable: true });
      },
    };
    accessors.set(field, d);
  }
  return d;
}

/**
 * Gives each context the payload parsed from the body text (one object for
 * the call, as a copied payload would be) and the deferred action fields as
 * properties computed on first read, from the body as it came (not as the
 * transform may have changed the payload since). Assigning to one makes it a
 * plain value.
 */
function withBody(contexts: Record<string, unknown>[], json: string, deferred: string[] | undefined): void {
  const payload: unknown = JSON.parse(json);
  for (const ctx of contexts) {
    ctx.payload = payload;
    const action = ctx.action as Record<string, unknown> | undefined;
    if (!deferred || !action) continue;
    Object.defineProperty(action, BODY, { value: json });
    for (const field of deferred) Object.defineProperty(action, field, deferredAccessor(field));
  }
}

/**
 * Loads Node's type-stripping compiler now (docs/transforms.md, "Spares"). Through the compile cache a worker
 * starts without it, and a generation whose modules are all cached never needs it; but a spare
 * waits for the next reload, which usually follows an edit, and a TypeScript module just edited
 * is stripped when it is loaded: that should not wait for the compiler to load. A spare started
 * after an edit loads it at once; the standby kept from the start loads it when a change is seen
 * (a `warm` message), during the reload's debounce. Once it is loaded, another call costs next
 * to nothing.
 */
function warmTypeStripper(): void {
  // Node warns that the function is experimental; the warning would reach the server's log on every spare
  const emitWarning = process.emitWarning;
  process.emitWarning = () => {};
  try {
    stripTypeScriptTypes('let warm: number;');
  } catch {
    // the compiler loads on demand instead
  } finally {
    process.emitWarning = emitWarning;
  }
}

if ((workerData as { spare?: boolean } | undefined)?.spare) warmTypeStripper();

// this worker can now be handed a generation's modules (it may wait as a spare)
port.postMessage({ type: 'idle' });
