/**
 * Starts the real CLI (`bin/hook-intake.js serve`) on a temporary config and
 * data dir, waits for `listening on …`, and collects everything it prints.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * How long `waitFor()` and `until()` wait by default. Generous on purpose: beside a CPU-bound
 * process a condition that happens is slow, not absent, and the deadline is only there to end a
 * broken test.
 */
export const DEADLINE_MS = 20_000;

/** How long `startCli()` waits for the listening line: a start loads and compiles the whole service. */
export const START_DEADLINE_MS = 45_000;

export const ROOT = resolve(import.meta.dirname, '../..');
export const BIN = join(ROOT, 'bin/hook-intake.js');

export interface Running {
  url: string;
  proc: ChildProcess;
  dir: string;
  dataDir: string;
  configFile: string;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /**
   * Waits until `pattern` appears in the output (after `from` characters). The deadline only
   * fails a broken test: under load a line that comes is slow, not absent.
   */
  waitFor(pattern: RegExp | string, timeoutMs?: number, from?: number): Promise<void>;
}

export function tempDir(prefix = 'hook-intake-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface StartOptions {
  config?: unknown;
  /** Config file name (extension picks the parser). */
  configName?: string;
  configText?: string;
  dir?: string;
  args?: string[];
  /** Flags for node itself, before the script. */
  nodeArgs?: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** How long to wait for `listening on` (default START_DEADLINE_MS). */
  startTimeoutMs?: number;
  /** The CLI entry to run (default this checkout's bin/hook-intake.js). */
  bin?: string;
}

/** Servers started and not exited yet: killed if the test process ends first (a test that timed out, say). */
const started = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of started) p.kill('SIGKILL');
});

export async function startCli(opts: StartOptions = {}): Promise<Running> {
  const dir = opts.dir ?? tempDir();
  const configFile = join(dir, opts.configName ?? 'hook-intake.json');
  if (opts.configText !== undefined) writeFileSync(configFile, opts.configText);
  else if (opts.config !== undefined) writeFileSync(configFile, JSON.stringify(opts.config, null, 2));
  const dataDir = join(dir, 'data');
  const args = [
    ...(opts.nodeArgs ?? []),
    opts.bin ?? BIN,
    'serve',
    '--port',
    '0',
    '--data',
    dataDir,
    ...(opts.config !== undefined || opts.configText !== undefined ? ['--config', configFile] : []),
    ...(opts.args ?? []),
  ];
  const proc = spawn(process.execPath, args, {
    cwd: opts.cwd ?? dir,
    env: { ...process.env, ...opts.env, HOOK_INTAKE_CONFIG: '', HOOK_INTAKE_DATA: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (b: Buffer) => {
    out += b.toString('utf8');
    for (const l of listeners) l();
  };
  proc.stdout!.on('data', onData);
  proc.stderr!.on('data', onData);
  started.add(proc);
  const exited = new Promise<number | null>((r) =>
    proc.on('exit', (code) => {
      started.delete(proc);
      r(code);
    }),
  );

  const waitFor = (pattern: RegExp | string, timeoutMs = DEADLINE_MS, from = 0) =>
    new Promise<void>((resolveWait, reject) => {
      const test = () => (typeof pattern === 'string' ? out.indexOf(pattern, from) !== -1 : pattern.test(out.slice(from)));
      if (test()) return resolveWait();
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`timed out waiting for ${pattern}; output so far:\n${out}`));
      }, timeoutMs);
      const check = () => {
        if (test()) {
          clearTimeout(timer);
          listeners.delete(check);
          resolveWait();
        }
      };
      listeners.add(check);
      void exited.then(() => {
        if (!test()) {
          clearTimeout(timer);
          listeners.delete(check);
          reject(new Error(`process exited while waiting for ${pattern}; output:\n${out}`));
        }
      });
    });

  try {
    await waitFor(/listening on (http:\/\/\S+)/, opts.startTimeoutMs ?? START_DEADLINE_MS);
  } catch (err) {
    // a server that never said it listens must not outlive the test
    proc.kill('SIGKILL');
    throw err;
  }
  const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
  return {
    url,
    proc,
    dir,
    dataDir,
    configFile,
    output: () => out,
    waitFor,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}

/** Runs a CLI command to completion. */
export function runCli(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; input?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun) => {
    const proc = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd ?? ROOT,
      env: { ...process.env, HOOK_INTAKE_CONFIG: '', HOOK_INTAKE_DATA: '', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (b: Buffer) => (stdout += b));
    proc.stderr.on('data', (b: Buffer) => (stderr += b));
    proc.stdin.end(opts.input ?? '');
    proc.on('exit', (code) => resolveRun({ code, stdout, stderr }));
  });
}

/**
 * Runs a CLI command in this process, as `bin/hook-intake.js` would (`main()`), and returns what it
 * wrote to stdout and stderr and its exit code. For what the command prints; a test of the process
 * itself (exit on a signal, stdin, a crash) uses `runCli()` or `startCli()`.
 */
export async function runInProcess(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { main } = await import('../../src/cli/main.ts');
  const { stdout: out, stderr: err } = process;
  const writes = { out: out.write, err: err.write };
  let stdout = '';
  let stderr = '';
  // (chunk, [encoding], [callback]), as a stream's write is called
  const catcher = (add: (text: string) => void) =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      add(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      if (done) queueMicrotask(done);
      return true;
    }) as typeof out.write;
  out.write = catcher((t) => (stdout += t));
  err.write = catcher((t) => (stderr += t));
  try {
    return { code: (await main(args)) ?? 0, stdout, stderr };
  } finally {
    out.write = writes.out;
    err.write = writes.err;
  }
}

export function cleanup(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** A POST with JSON, returning status, headers and parsed body. */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

export async function get(url: string, token?: string): Promise<{ status: number; body: any; text: string }> {
  const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
}

/** Polls `fn` until it returns a truthy value; the deadline is only there to fail a broken test. */
export async function until<T>(
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = DEADLINE_MS,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
