/**
 * What the kernel says about a server process (Linux /proc): CPU time
 * (utime + stime of all its threads, so GC, libuv and SQLite count too) and
 * resident memory. Reading these costs the server nothing.
 */
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** CPU time used by `pid` so far, in microseconds (resolution: one clock tick, usually 10 ms). */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // the command name (field 2) may contain spaces; the fields after its closing paren are fixed
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) / clockTicks()) * 1e6;
}

/** Resident set size of `pid` now, in bytes. */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+) kB/m.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

/** Samples RSS every `everyMs` until stopped; `stop()` returns the peak seen. */
export function sampleRss(pid: number, everyMs = 200): { stop(): number } {
  let peak = rssBytes(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssBytes(pid));
    } catch {
      // the process went away; the caller notices through its exit
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      try {
        peak = Math.max(peak, rssBytes(pid));
      } catch {
        // as above
      }
      return peak;
    },
  };
}

/**
 * Waits until `pid` stops using CPU (less than `idleFraction` of one core over
 * a `windowMs` window), at most `maxMs`. Work the server does after answering
 * (agent runs, heartbeats, deliveries, WAL checkpoints) is thereby counted in
 * the round that caused it.
 */
export async function settle(pid: number, opts: { windowMs?: number; idleFraction?: number; maxMs?: number } = {}): Promise<boolean> {
  const windowMs = opts.windowMs ?? 500;
  // 4% of a 500 ms window is two clock ticks: a process with only timers running reads as idle
  const idle = opts.idleFraction ?? 0.04;
  const deadline = Date.now() + (opts.maxMs ?? 30_000);
  let before = cpuMicros(pid);
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, windowMs));
    const now = cpuMicros(pid);
    if (now - before <= windowMs * 1000 * idle) return true;
    before = now;
  }
  return false;
}
