/**
 * `node bench/pool.ts [piscina-dir]`: the cost of one transform call through the service's pool, and,
 * given a directory where `piscina` and `tinypool` are installed, through those libraries doing the
 * same work (the body parsed in the worker, a trivial TypeScript transform). Prints, per scenario,
 * wall time per call, CPU of the whole process per call (all threads) and the p99 latency of one call.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTransformPool } from '../src/transforms/pool.ts';

type Call = (json: string) => Promise<unknown>;
interface Runner {
  name: string;
  call: Call;
  close(): Promise<void>;
}

const dir = mkdtempSync(join(tmpdir(), 'hook-intake-pool-bench-'));
const file = join(dir, 'transform.ts');
writeFileSync(
  file,
  `export default function (ctx: { payload: { n: number } }): { message: string } { return { message: 'got ' + ctx.payload.n }; }\n`,
);
const specs = [{ key: 't', file }];
const context = () => [
  { headers: {}, query: {}, path: 'bench', url: '/hooks/bench', now: new Date().toISOString(), action: { kind: 'agent' } },
];

async function ours(): Promise<Runner> {
  const pool = await createTransformPool(specs, { max: 1 });
  return { name: 'hook-intake pool', call: (json) => pool.call('t', context(), 10_000, { json }), close: () => pool.close() };
}

const WORKER = `
import { pathToFileURL } from 'node:url';
const fns = new Map();
for (const s of ${JSON.stringify(specs)}) fns.set(s.key, (await import(pathToFileURL(s.file).href)).default);
export default async function ({ key, calls, json }) {
  const fn = fns.get(key);
  const payload = JSON.parse(json);
  const out = [];
  for (const ctx of calls) { ctx.payload = payload; out.push(await fn(ctx)); }
  return out;
}
`;

async function library(from: string, name: 'piscina' | 'tinypool'): Promise<Runner> {
  const workerFile = join(dir, 'lib-worker.mjs');
  writeFileSync(workerFile, WORKER);
  const req = createRequire(join(from, 'package.json'));
  const mod = (await import(req.resolve(name))) as Record<string, unknown>;
  const Ctor = (name === 'piscina' ? (mod.Piscina ?? mod.default) : (mod.Tinypool ?? mod.default)) as new (
    o: object,
  ) => {
    run(task: unknown, opts?: object): Promise<unknown>;
    destroy(): Promise<void>;
  };
  const pool = new Ctor({ filename: workerFile, minThreads: 1, maxThreads: 1 });
  // a call with a deadline, as the service makes them (the deadline is how a looping transform is stopped)
  const call: Call = (json) => pool.run({ key: 't', calls: context(), json }, { signal: AbortSignal.timeout(10_000) });
  await call('{"n":0}');
  return { name, call, close: () => pool.destroy() };
}

function p99(xs: number[]): number {
  xs.sort((a, b) => a - b);
  return xs[Math.floor(xs.length * 0.99)]!;
}

interface Sample {
  wall: number;
  cpu: number;
  p99: number;
}

/** `burst` calls made in one turn, awaited together, `n` calls in all: µs per call and the p99 of one call. */
async function measure(r: Runner, json: string, n: number, burst: number): Promise<Sample> {
  for (let i = 0; i < n / 10; i += burst) await Promise.all(Array.from({ length: burst }, () => r.call(json)));
  const lat: number[] = [];
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i += burst) {
    await Promise.all(
      Array.from({ length: burst }, () => {
        const s = performance.now();
        return r.call(json).then(() => lat.push(performance.now() - s));
      }),
    );
  }
  const c = process.cpuUsage(c0);
  return { wall: ((performance.now() - t0) * 1000) / n, cpu: (c.user + c.system) / n, p99: p99(lat) * 1000 };
}

const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const small = JSON.stringify({ n: 1, repo: 'hook-intake', ref: 'refs/heads/main', pusher: { name: 'ci' } });
const large = JSON.stringify({ n: 1, text: 'x'.repeat(100 * 1024) });
const scenarios = [
  ['small body, one at a time', small, 10_000, 1],
  ['small body, 32 per turn', small, 10_000, 32],
  ['100 KiB body, one at a time', large, 1_000, 1],
  ['100 KiB body, 32 per turn', large, 1_000, 32],
] as const;
const ROUNDS = 5;
const from = process.argv[2];
const runners = [await ours()];
try {
  if (from) runners.push(await library(from, 'piscina'), await library(from, 'tinypool'));
  // rounds interleave the pools, so that a busy spell of the machine falls on all of them; the median is shown
  const samples = new Map<string, Sample[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [label, json, n, burst] of scenarios) {
      for (const r of runners) {
        const key = `${label}\t${r.name}`;
        samples.set(key, [...(samples.get(key) ?? []), await measure(r, json, n, burst)]);
      }
    }
  }
  process.stdout.write(`median of ${ROUNDS} rounds: wall µs per call, CPU µs per call (all threads), p99 µs of one call\n`);
  for (const [key, xs] of samples) {
    const [label, name] = key.split('\t');
    const f = (k: keyof Sample) =>
      median(xs.map((x) => x[k]))
        .toFixed(1)
        .padStart(8);
    process.stdout.write(`${label!.padEnd(28)} ${name!.padEnd(17)} ${f('wall')} ${f('cpu')} ${f('p99')}\n`);
  }
} finally {
  await Promise.all(runners.map((r) => r.close()));
  rmSync(dir, { recursive: true, force: true });
}
