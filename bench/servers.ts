/**
 * Starting and stopping the two servers under test as real processes: the
 * bare node:http baseline and the real `hook-intake serve` CLI on a temporary
 * config and data dir. Output goes to a log file in the temp dir (read back
 * for the `listening on` line and shown when something fails), so the
 * benchmark process does no work per request on the servers' behalf.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');
const BARE = join(ROOT, 'bench/bare-server.mjs');
const KOA = join(ROOT, 'bench/koa-server.mjs');

export interface Server {
  name: string;
  url: string;
  pid: number;
  /** Other processes whose CPU counts as this server's (the Redis driver's redis-server). */
  extraPids?: number[];
  logFile: string;
  /** Last lines of the server's output, for error messages. */
  tail(lines?: number): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

/** Every process the benchmark starts (servers and wrk), so an interrupted run can still kill them all. */
const live = new Set<ChildProcess>();

export function track(proc: ChildProcess): void {
  live.add(proc);
  proc.on('exit', () => live.delete(proc));
}

export function killAll(): void {
  for (const p of live) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  live.clear();
}

/** A temporary directory for one benchmark run, removed (and every server killed) when the process exits or is interrupted. */
export function benchWorkDir(prefix: string): string {
  const work = mkdtempSync(join(tmpdir(), prefix));
  const cleanup = () => {
    killAll();
    rmSync(work, { recursive: true, force: true });
  };
  process.on('exit', cleanup);
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.on(sig, () => {
      cleanup();
      process.exit(130);
    });
  return work;
}

function tailOf(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .slice(-lines - 1)
      .join('\n');
  } catch {
    return '(no output)';
  }
}

/**
 * The engine settings hook-intake is run with here, as deploy/Dockerfile and the systemd units in
 * deploy/ run it (docs/performance.md, "Engine settings"; test/deploy/engine-settings.test.ts
 * checks that the three agree).
 */
export const ENGINE_FLAGS = ['--max-semi-space-size=8', '--no-maglev', '--no-allocation-site-pretenuring'];
export const ENGINE_ENV = { GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=131072' };

async function startProcess(
  name: string,
  args: string[],
  dir: string,
  nodeArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<Server> {
  const logFile = join(dir, `${name.replace(/\W+/g, '-')}.log`);
  const fd = openSync(logFile, 'a');
  const proc = spawn(process.execPath, [...nodeArgs, ...args], {
    cwd: dir,
    env: { ...process.env, HOOK_INTAKE_CONFIG: '', HOOK_INTAKE_DATA: '', ...env },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  track(proc);
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  const tail = (lines = 20) => tailOf(logFile, lines);

  const deadline = Date.now() + 20_000;
  let url: string | undefined;
  while (!url) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`${name} exited before listening:\n${tail()}`);
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`${name} did not print "listening on" within 20 s:\n${tail()}`);
    }
    url = /listening on (http:\/\/\S+)/.exec(readFileSync(logFile, 'utf8'))?.[1];
    if (!url) await new Promise((r) => setTimeout(r, 50));
  }

  return {
    name,
    url,
    pid: proc.pid!,
    logFile,
    tail,
    async stop(graceMs = 15_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}

export function startBare(dir: string, token: string): Promise<Server> {
  return startProcess('bare', [BARE, token], dir);
}

export function startKoa(dir: string, token: string): Promise<Server> {
  return startProcess('koa (reference)', [KOA, token], dir);
}

export interface IntakeFiles {
  configFile: string;
  dataDir: string;
}

/** Writes hook-intake's config (and any scenario files) under `dir`. */
export function writeIntakeConfig(dir: string, config: unknown, files: Record<string, string> = {}): IntakeFiles {
  const configFile = join(dir, 'hook-intake.json');
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  for (const [rel, text] of Object.entries(files)) {
    const file = join(dir, rel);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  return { configFile, dataDir: join(dir, 'data') };
}

/**
 * `hook-intake check` on the config, by this checkout or the one at `root`: undefined when it
 * passes, else its first error lines. It also loads the config's plugins, so a server started
 * afterwards finds them compiled (see `runScenario`).
 */
export function checkConfig(f: IntakeFiles, root = ROOT): string | undefined {
  const bin = join(root, 'bin/hook-intake.js');
  const r = spawnSync(process.execPath, [bin, 'check', '--config', f.configFile, '--data', f.dataDir], {
    encoding: 'utf8',
    cwd: dirname(f.configFile),
  });
  if (r.status === 0) return undefined;
  return (r.stderr || r.stdout).trim().split('\n').slice(0, 4).join(' / ');
}

export interface IntakeOptions {
  /** Log and row name. */
  name: string;
  /** Checkout to run (default: this one); another one compares two versions in the same run. */
  root?: string;
  nodeArgs?: string[];
}

export function startIntake(dir: string, f: IntakeFiles, o: IntakeOptions): Promise<Server> {
  const bin = join(o.root ?? ROOT, 'bin/hook-intake.js');
  const dataDir = `${f.dataDir}-${o.name.replace(/\W+/g, '-')}`;
  // a scenario's own flags come last, and V8 takes the last of a flag given twice
  return startProcess(
    o.name,
    [bin, 'serve', '--config', f.configFile, '--data', dataDir, '--port', '0'],
    dir,
    [...ENGINE_FLAGS, ...(o.nodeArgs ?? [])],
    ENGINE_ENV,
  );
}
