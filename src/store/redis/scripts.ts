/**
 * The driver's Lua scripts: one file each, filed by concern (`lua/records/accept.lua`,
 * `lua/counters/countInWindow.lua`, …), with the helpers they share in `lua/includes/`. A script takes
 * a helper with a line `--- @include "<name>"`, which the loader replaces with `lua/includes/<name>.lua`
 * (a helper may include others; each goes in once per script, and a cycle is an error). Each script
 * declares at its top its arguments and the keys it reads and writes (docs/redis.md).
 *
 * The files are read and resolved once per process, at the first open; each client gets them as
 * commands (`hi<Name>`): ioredis runs a script by its SHA1 (EVALSHA) and sends the text only when the
 * server does not have it yet.
 */
import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';

/** The scripts the driver calls, each a file `lua/<concern>/<name>.lua`. */
const NAMES = [
  'accept',
  'startRun',
  'requeueRun',
  'insertHeartbeat',
  'failHeartbeats',
  'finishRun',
  'claimRuns',
  'endClaim',
  'enqueueTask',
  'endTask',
  'claimTasks',
  'recordDelivery',
  'dueDeliveries',
  'redeliver',
  'pruneIdempotency',
  'countInWindow',
  'prune',
] as const;

export type ScriptName = (typeof NAMES)[number];
export type Arg = string | number | Buffer;

/** Calls one of the scripts with its arguments (the key prefix first). */
export type RunScript = (name: ScriptName, args: Arg[]) => Promise<unknown>;

const LUA = fileURLToPath(new URL('./lua/', import.meta.url));
const INCLUDE = /^--- @include "([\w-]+)"[ \t]*$/gm;

let loaded: Promise<Map<ScriptName, string>> | undefined;

/** The scripts' texts with their includes resolved, read once per process. */
export function scriptTexts(dir = LUA): Promise<Map<ScriptName, string>> {
  if (dir !== LUA) return readScripts(dir);
  return (loaded ??= readScripts(dir).catch((err) => {
    loaded = undefined;
    throw err;
  }));
}

async function readScripts(dir: string): Promise<Map<ScriptName, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.lua') || basename(entry.parentPath) === 'includes') continue;
    const name = entry.name.slice(0, -'.lua'.length);
    const path = join(entry.parentPath, entry.name);
    if (files.has(name)) throw new Error(`${path}: a script named ${name} exists already (${files.get(name)})`);
    files.set(name, path);
  }
  const includes = new Map<string, string>();
  const out = new Map<ScriptName, string>();
  for (const name of NAMES) {
    const path = files.get(name);
    if (!path) throw new Error(`${join(dir, '*', `${name}.lua`)}: the Redis driver's script ${name} is missing`);
    out.set(name, await resolveIncludes(path, await readFile(path, 'utf8'), join(dir, 'includes'), includes));
  }
  const unknown = [...files.keys()].filter((n) => !(NAMES as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`${dir}: scripts the driver does not call: ${unknown.join(', ')}`);
  return out;
}

interface Resolving {
  dir: string;
  /** Include texts read so far, by name (shared by every script). */
  includes: Map<string, string>;
  /** Includes already in this script: each goes in once. */
  seen: Set<string>;
  /** The includes being resolved, outermost first: one met again is a cycle. */
  stack: string[];
}

/**
 * The script `text` (read from `path`) with each `--- @include "<name>"` line replaced by the text of
 * `<includesDir>/<name>.lua`, resolved the same way; an include already in goes in only once.
 * `cache` keeps include texts between scripts.
 */
export function resolveIncludes(path: string, text: string, includesDir: string, cache = new Map<string, string>()): Promise<string> {
  return resolve(path, text, { dir: includesDir, includes: cache, seen: new Set(), stack: [] });
}

async function resolve(path: string, text: string, r: Resolving): Promise<string> {
  const parts: string[] = [];
  let last = 0;
  for (const m of text.matchAll(INCLUDE)) {
    const name = m[1]!;
    parts.push(text.slice(last, m.index));
    last = m.index + m[0].length;
    if (r.stack.includes(name)) throw new Error(`${path}: includes ${name}, which includes itself (${[...r.stack, name].join(' → ')})`);
    if (r.seen.has(name)) continue;
    r.seen.add(name);
    const file = join(r.dir, `${name}.lua`);
    let inc = r.includes.get(name);
    if (inc === undefined) {
      inc = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
        throw new Error(`${path}: cannot include ${JSON.stringify(name)}: ${err.code === 'ENOENT' ? `no file ${file}` : err.message}`);
      });
      r.includes.set(name, inc);
    }
    parts.push((await resolve(file, inc, { ...r, stack: [...r.stack, name] })).trimEnd());
  }
  parts.push(text.slice(last));
  return parts.join('');
}

/** Registers the scripts with `client` as commands (`hi<Name>`); the calls go through the returned function. */
export function defineScripts(client: Redis, texts: Map<ScriptName, string>): RunScript {
  const commands = client as unknown as Record<string, (...a: Arg[]) => Promise<unknown>>;
  const calls = {} as Record<ScriptName, (...a: Arg[]) => Promise<unknown>>;
  for (const [name, lua] of texts) {
    const command = `hi${name[0]!.toUpperCase()}${name.slice(1)}`;
    client.defineCommand(command, { numberOfKeys: 0, lua });
    calls[name] = commands[command]!.bind(client);
  }
  return (name, args) => calls[name](...args);
}
