/**
 * The load generator: wrk (C, one thread, keep-alive connections, latency in
 * microseconds from an HdrHistogram). It is cheap per request, which matters
 * on a small machine where it shares the cores with the server under test.
 * A Lua script sets the request and prints one machine-readable summary line.
 * With a rate, each connection pauses between requests so that the total is
 * about that many requests per second; the pause is not part of the latency.
 */
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { track } from './servers.ts';

export interface LoadSpec {
  url: string;
  token: string;
  bodyFile: string;
  contentType: string;
  headers: Record<string, string>;
  connections: number;
  seconds: number;
  /** Paced load: total requests per second across all connections (each waits its share between requests); absent = as fast as possible. */
  rate?: number;
  /** Directory for the generated Lua script. */
  dir: string;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  /** Connection, read, write and timeout errors. */
  socketErrors: number;
  /** Answers outside 2xx/3xx. */
  badStatus: number;
  p50Ms: number;
  p99Ms: number;
}

/** wrk's version line, or undefined when wrk is not installed. */
export function wrkVersion(): string | undefined {
  // without a URL wrk prints its usage, version first, and exits 1
  const r = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  if (r.error) return undefined;
  const first = `${r.stdout}${r.stderr}`.split('\n')[0] ?? '';
  return /^wrk /.test(first) ? first.split(' [')[0] : undefined;
}

const lua = (s: LoadSpec) => `
wrk.method = "POST"
wrk.headers["Content-Type"] = ${JSON.stringify(s.contentType)}
wrk.headers["Authorization"] = ${JSON.stringify(`Bearer ${s.token}`)}
${Object.entries(s.headers)
  .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
  .join('\n')}
local f = assert(io.open(${JSON.stringify(s.bodyFile)}, "rb"))
wrk.body = f:read("*a")
f:close()
${s.rate ? `local pause = ${((s.connections / s.rate) * 1000).toFixed(3)}\ndelay = function() return pause end\n` : ''}done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("BENCH_RESULT %d %d %d %d %d %d\\n", summary.requests, summary.duration,
    e.connect + e.read + e.write + e.timeout, e.status, latency:percentile(50), latency:percentile(99)))
end
`;

/** Runs one closed-loop load of `seconds` and returns what wrk measured. */
export function runLoad(s: LoadSpec): Promise<LoadResult> {
  const script = join(s.dir, 'load.lua');
  writeFileSync(script, lua(s));
  const args = ['-t1', `-c${s.connections}`, `-d${s.seconds}s`, '--timeout', '10s', '-s', script, s.url];
  return new Promise((resolve, reject) => {
    const proc = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    track(proc);
    let out = '';
    proc.stdout.on('data', (b: Buffer) => (out += b));
    proc.stderr.on('data', (b: Buffer) => (out += b));
    proc.on('error', reject);
    proc.on('exit', (code) => {
      const m = /BENCH_RESULT (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(out);
      if (code !== 0 || !m) return reject(new Error(`wrk failed (exit ${code}):\n${out}`));
      const [, requests, durationUs, socketErrors, badStatus, p50, p99] = m.map(Number) as number[];
      resolve({
        requests: requests!,
        seconds: durationUs! / 1e6,
        socketErrors: socketErrors!,
        badStatus: badStatus!,
        p50Ms: p50! / 1000,
        p99Ms: p99! / 1000,
      });
    });
  });
}
