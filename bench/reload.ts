/**
 * Hot-reload benchmark (`npm run bench:reload`): starts the real CLI with a
 * TypeScript transform and measures
 *   0. save → live for the first save after a start, in 5 fresh servers (goal: each ≤ 500 ms),
 *   1. save → live latency over 50 transform edits (median, p99; goal p50 ≤ 150 ms),
 *   2. failed requests during 100 reloads under load (goal 0),
 *   3. RSS after 1,000 transform reloads against after 10 (goal: no growth with reloads).
 *
 * Env: RELOAD_FIRST (5), RELOAD_EDITS (50), RELOAD_UNDER_LOAD (100), RELOAD_MANY (1000), LOAD_CLIENTS (8).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const FIRST = Number(process.env.RELOAD_FIRST ?? 5);
const EDITS = Number(process.env.RELOAD_EDITS ?? 50);
const UNDER_LOAD = Number(process.env.RELOAD_UNDER_LOAD ?? 100);
const MANY = Number(process.env.RELOAD_MANY ?? 1000);
const CLIENTS = Number(process.env.LOAD_CLIENTS ?? 8);
const HOOK = 'bench-hook-token-0123456789abcdef0123';
const GW = 'bench-gateway-token-0123456789abcdef01';

const transform = (v: string) =>
  `export default (ctx: { payload: { n: number } }) => ({ text: 'version ${v} ' + ctx.payload.n, mode: 'next-heartbeat' });\n`;

interface Server {
  dir: string;
  url: string;
  proc: ChildProcess;
}

async function startServer(): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'hook-intake-reload-'));
  mkdirSync(join(dir, 'transforms'));
  writeFileSync(join(dir, 'transforms', 'shape.ts'), transform('0'));
  writeFileSync(
    join(dir, 'hook-intake.json'),
    JSON.stringify({
      gateway: { auth: { token: GW } },
      hooks: {
        enabled: true,
        token: HOOK,
        mappings: [{ id: 'shape', match: { path: 'shape' }, action: 'wake', transform: { module: 'shape.ts' } }],
      },
      agents: { defaults: { heartbeat: { every: '0' } } },
      logging: { level: 'warn' },
    }),
  );
  const proc = spawn(
    process.execPath,
    [join(ROOT, 'bin/hook-intake.js'), 'serve', '--config', join(dir, 'hook-intake.json'), '--data', join(dir, 'data'), '--port', '0'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((res, rej) => {
    let out = '';
    proc.stdout.on('data', (b: Buffer) => {
      out += b;
      const m = /listening on (\S+)/.exec(out);
      if (m) res(m[1]!);
    });
    proc.on('exit', () => rej(new Error(`server exited:\n${out}`)));
  });
  return { dir, url, proc };
}

async function stopServer(s: Server): Promise<void> {
  s.proc.kill('SIGTERM');
  await new Promise((r) => s.proc.on('exit', r));
  rmSync(s.dir, { recursive: true, force: true });
}

const headers = { authorization: `Bearer ${HOOK}`, 'content-type': 'application/json' };
async function version({ url }: Server): Promise<string | undefined> {
  const r = await fetch(`${url}/hooks/shape`, { method: 'POST', headers, body: '{"n":1}' });
  if (r.status !== 200) return undefined;
  const { eventId } = (await r.json()) as { eventId: string };
  const ev = (await (await fetch(`${url}/api/main/events?limit=1`, { headers: { authorization: `Bearer ${GW}` } })).json()) as {
    events: { id: string; text: string }[];
  };
  const e = ev.events.find((x) => x.id === eventId);
  return /version (\S+) /.exec(e?.text ?? '')?.[1];
}
async function generation({ url }: Server): Promise<number> {
  const s = (await (await fetch(`${url}/api/status`, { headers: { authorization: `Bearer ${GW}` } })).json()) as {
    generation: { id: number };
  };
  return s.generation.id;
}
const rssMb = ({ proc }: Server) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'))![1]) / 1024;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Writes a new version and waits until a generation newer than `before` is live. */
async function reloadOnce(s: Server, v: string): Promise<void> {
  const before = await generation(s);
  writeFileSync(join(s.dir, 'transforms', 'shape.ts'), transform(v));
  while ((await generation(s)) <= before) await sleep(5);
}

/** Writes a new version and returns the time until a request shows it. */
async function saveToLive(s: Server, v: string): Promise<number> {
  const t0 = performance.now();
  writeFileSync(join(s.dir, 'transforms', 'shape.ts'), transform(v));
  while ((await version(s)) !== v) await sleep(2);
  return performance.now() - t0;
}

// 0. the first save after a start, in fresh servers: one request first (a client's and a server's
// first request cost some tens of ms that are no part of a reload), then a second as an operator
// would take to edit
const firsts: number[] = [];
for (let i = 0; i < FIRST; i++) {
  const s = await startServer();
  try {
    await version(s);
    await sleep(1000);
    firsts.push(await saveToLive(s, 'first'));
  } finally {
    await stopServer(s);
  }
}

const srv = await startServer();
const { url } = srv;
try {
  await sleep(500);
  // 1. save → live
  const latencies: number[] = [];
  for (let i = 1; i <= EDITS; i++) {
    latencies.push(await saveToLive(srv, `e${i}`));
    await sleep(150); // let the warm spares refill, as between real edits
  }

  // 2. failed requests during reloads under load
  let ok = 0;
  let failed = 0;
  let stop = false;
  const failures = new Map<string, number>();
  const client = async (i: number) => {
    while (!stop) {
      const path = i % 2 ? '/hooks/shape' : '/hooks/wake';
      const body = i % 2 ? '{"n":2}' : '{"text":"load","mode":"next-heartbeat"}';
      try {
        const r = await fetch(`${url}${path}`, { method: 'POST', headers, body });
        await r.arrayBuffer();
        if (r.status === 200) ok++;
        else {
          failed++;
          failures.set(String(r.status), (failures.get(String(r.status)) ?? 0) + 1);
        }
      } catch (err) {
        failed++;
        failures.set((err as Error).message, (failures.get((err as Error).message) ?? 0) + 1);
      }
    }
  };
  const clients = Array.from({ length: CLIENTS }, (_, i) => client(i));
  for (let i = 1; i <= UNDER_LOAD; i++) await reloadOnce(srv, `l${i}`);
  stop = true;
  await Promise.all(clients);

  // 3. RSS after 10 and after MANY reloads
  for (let i = 1; i <= 10; i++) await reloadOnce(srv, `m${i}`);
  await sleep(1000);
  const rss10 = rssMb(srv);
  for (let i = 11; i <= MANY; i++) await reloadOnce(srv, `m${i}`);
  await sleep(1000);
  const rssMany = rssMb(srv);

  const line = (k: string, v: string) => console.log(`| ${k} | ${v} |`);
  console.log(
    `\nhot reload — ${cpus()[0]?.model ?? 'cpu'} ×${cpus().length}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}\n`,
  );
  console.log('| measure | result |\n|---|---|');
  if (FIRST)
    line(`first save after start → live, ${FIRST} starts`, `${firsts.map((x) => x.toFixed(0)).join(', ')} ms (goal each ≤ 500 ms)`);
  line(
    `save → live over ${EDITS} edits`,
    `p50 ${pct(latencies, 50).toFixed(0)} ms, p99 ${pct(latencies, 99).toFixed(0)} ms (goal p50 ≤ 150 ms)`,
  );
  line(
    `requests during ${UNDER_LOAD} reloads (${CLIENTS} clients)`,
    `${ok} answered 200, ${failed} failed${failed ? ` (${[...failures].map(([k, n]) => `${k}: ${n}`).join(', ')})` : ''} (goal 0 failed)`,
  );
  line(`RSS after 10 reloads → after ${MANY}`, `${rss10.toFixed(0)} MB → ${rssMany.toFixed(0)} MB (×${(rssMany / rss10).toFixed(2)})`);
  process.exitCode = failed ? 1 : 0;
} finally {
  await stopServer(srv);
}
