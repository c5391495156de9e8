/**
 * From rounds to the results table. Every hook-intake figure is also shown as
 * a ratio to the bare server of the same run, oriented so that higher is
 * better and 1.0 means "as good as the bare server".
 */
import { cpus, availableParallelism, loadavg, release } from 'node:os';
import type { Scenario, Targets } from './scenarios.ts';

export interface Round {
  requests: number;
  seconds: number;
  cpuMicros: number;
  p50Ms: number;
  p99Ms: number;
  rssBytes: number;
  socketErrors: number;
  badStatus: number;
  /** False when the server was still busy when the settle wait gave up. */
  settled: boolean;
}

export interface Summary {
  rounds: number;
  requests: number;
  reqPerSec: number;
  cpuPerReq: number;
  p50Ms: number;
  p99Ms: number;
  rssMb: number;
  errors: number;
  unsettled: number;
}

export interface ServerResult {
  /** `bare`, `hook-intake`, or the name of a checkout compared in the same run. */
  name: string;
  summary: Summary;
  /** Bare CPU/req ÷ this server's, per interleaved pair of rounds. */
  pairRatios: number[];
}

export interface ScenarioResult {
  scenario: Scenario;
  skipped?: string;
  /** The bare server first. */
  servers?: ServerResult[];
}

export interface Machine {
  cpu: string;
  cores: number;
  node: string;
  os: string;
  loadGenerator: string;
  date: string;
  loadBefore: string;
  loadAfter?: string;
  settings: string;
}

export function machineInfo(loadGenerator: string, settings: string): Machine {
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: availableParallelism(),
    node: process.version,
    os: `Linux ${release()}`,
    loadGenerator,
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    loadBefore: loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
    settings,
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export function summarize(rounds: Round[]): Summary {
  const requests = rounds.reduce((n, r) => n + r.requests, 0);
  const cpu = rounds.reduce((n, r) => n + r.cpuMicros, 0);
  return {
    rounds: rounds.length,
    requests,
    reqPerSec: median(rounds.map((r) => r.requests / r.seconds)),
    cpuPerReq: requests ? cpu / requests : NaN,
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    rssMb: Math.max(...rounds.map((r) => r.rssBytes)) / 2 ** 20,
    errors: rounds.reduce((n, r) => n + r.socketErrors + r.badStatus, 0),
    unsettled: rounds.filter((r) => !r.settled).length,
  };
}

/** The headline: median over interleaved pairs of bare CPU/req ÷ this server's (robust to one disturbed round). */
export const cpuRatio = (r: ServerResult) => median(r.pairRatios);

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const f1 = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
const ms = (n: number) => (n >= 10 ? n.toFixed(1) : n.toFixed(2));
const x = (n: number) => n.toFixed(2);

function targetNotes(t: Targets | undefined, ratio: number, o: Summary): string {
  if (!t) return '';
  const notes: string[] = [];
  const mark = (ok: boolean) => (ok ? 'met' : '**missed**');
  if (t.cpuRatio !== undefined) notes.push(`CPU ratio ≥ ${t.cpuRatio}: ${mark(ratio >= t.cpuRatio)}`);
  if (t.p99Ms !== undefined) notes.push(`p99 ≤ ${t.p99Ms} ms: ${mark(o.p99Ms <= t.p99Ms)}`);
  if (t.rssMb !== undefined) notes.push(`RSS ≤ ${t.rssMb} MB: ${mark(o.rssMb <= t.rssMb)}`);
  return notes.join('; ');
}

export function markdown(machine: Machine, results: ScenarioResult[]): string {
  const out: string[] = [];
  out.push(`Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.os}; Node ${machine.node}; load generator ${machine.loadGenerator}`);
  out.push(`Date: ${machine.date}; load average before ${machine.loadBefore}${machine.loadAfter ? `, after ${machine.loadAfter}` : ''}`);
  out.push(`Run: ${machine.settings}`);
  out.push('');
  out.push('| scenario | conns | server | req/s | CPU µs/req | CPU ratio (range) | p50 ms | p99 ms | RSS MB |');
  out.push('|---|---:|---|---:|---:|---|---:|---:|---:|');
  const notes: string[] = [];
  for (const r of results) {
    const s = r.scenario;
    const [bare, ...others] = r.servers ?? [];
    if (r.skipped || !bare) {
      out.push(`| ${s.label} | ${s.connections} | — | skipped: ${r.skipped ?? 'no result'} | | | | | |`);
      continue;
    }
    const b = bare.summary;
    out.push(
      `| ${s.label} | ${s.connections} | bare | ${int(b.reqPerSec)} | ${f1(b.cpuPerReq)} | 1.00 | ${ms(b.p50Ms)} | ${ms(b.p99Ms)} | ${int(b.rssMb)} |`,
    );
    if (b.errors) notes.push(`- ${s.label}, bare: ${b.errors} requests failed: figures are suspect`);
    for (const srv of others) {
      const o = srv.summary;
      const ratio = cpuRatio(srv);
      const pr = srv.pairRatios;
      const spread = pr.length > 1 ? ` (${x(Math.min(...pr))}–${x(Math.max(...pr))})` : '';
      out.push(
        `| | | ${srv.name} | ${int(o.reqPerSec)} (${x(o.reqPerSec / b.reqPerSec)}) | ${f1(o.cpuPerReq)} | **${x(ratio)}**${spread} | ` +
          `${ms(o.p50Ms)} (${x(b.p50Ms / o.p50Ms)}) | ${ms(o.p99Ms)} (${x(b.p99Ms / o.p99Ms)}) | ${int(o.rssMb)} (${x(b.rssMb / o.rssMb)}) |`,
      );
      const t = srv.name.startsWith('hook-intake') ? targetNotes(s.targets, ratio, o) : '';
      if (t) notes.push(`- ${s.label}, ${srv.name}: ${t}`);
      if (o.errors)
        notes.push(`- ${s.label}, ${srv.name}: ${o.errors} requests failed (socket errors or non-2xx answers): figures are suspect`);
      if (o.unsettled)
        notes.push(`- ${s.label}, ${srv.name}: still busy when ${o.unsettled} round(s) ended: CPU per request is an underestimate`);
    }
  }
  out.push('');
  out.push(
    "CPU ratio: bare CPU/req ÷ this server's, median over interleaved pairs of rounds (range: lowest–highest pair). " +
      'Other ratios in parentheses: bare ÷ this server for latency and RSS, this server ÷ bare for req/s. ' +
      'Higher is better; 1.00 = as good as the bare server.',
  );
  if (notes.length) out.push('', 'Targets and warnings:', '', ...notes);
  return `${out.join('\n')}\n`;
}
