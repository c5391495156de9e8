/**
 * Starts the real CLI (`bin/hook-intake.js serve`) on a temporary config and
 * data dir, waits for `listening on …`, and collects everything it prints.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

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
  /** Waits until `pattern` appears in the output (after `from` characters). */
  waitFor(pattern: RegExp | string, timeoutMs?: number, from?: number): Promise<void>;
}

/** How long a service may take to print `listening on …`. */
const READY_TIMEOUT_MS = 25_000;

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
  /** How long to wait for `listening on` (default 25 s). */
  startTimeoutMs?: number;
}

export async function startCli(opts: StartOptions = {}): Promise<Running> {
  const dir = opts.dir ?? tempDir();
  const configFile = join(dir, opts.configName ?? 'hook-intake.json');
  if (opts.configText !== undefined) writeFileSync(configFile, opts.configText);
  else if (opts.config !== undefined) writeFileSync(configFile, JSON.stringify(opts.config, null, 2));
  const dataDir = join(dir, 'data');
  const args = [...(opts.nodeArgs ?? []), BIN, 'serve', '--port', '0', '--data', dataDir, ...(opts.config !== undefined || opts.configText !== undefined ? ['--config', configFile] : []), ...(opts.args ?? [])];
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
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));

  const waitFor = (pattern: RegExp | string, timeoutMs = 10_000, from = 0) =>
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

  // a start that fails ends the wait at once; a slow one, on a machine shared with other test runs, gets time
  await waitFor(/listening on (http:\/\/\S+)/, opts.startTimeoutMs ?? READY_TIMEOUT_MS);
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
export function runCli(args: string[], opts: { cwd?: string; env?: Record<string, string>; input?: string } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
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

export function cleanup(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** A POST with JSON, returning status, headers and parsed body. */
export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: any; text: string }> {
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

/** Polls `fn` until it returns a truthy value. */
export async function until<T>(fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 10_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
