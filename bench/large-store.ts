/**
 * `node bench/large-store.ts`: the read API on a large store. Builds a database of several million
 * rows straight through SQLite (the store's own schema, bulk inserts), serves it with
 * `hook-intake serve`, and sends a wake every few milliseconds from a worker thread while each read
 * runs. Two figures per read: the longest the server's event loop was held while it ran
 * (a 1 ms timer inside the server, bench/loop-delay.mjs), and the slowest of the wakes
 * sent meanwhile, which also waited for their own commits.
 *
 *   node bench/large-store.ts                          3 M events (2 M of them pending), 1 M runs, 0.5 M deliveries
 *   node bench/large-store.ts --events 5000000 --pending 1800000
 *   node bench/large-store.ts --against /tmp/old       the same reads on another checkout (its node_modules linked), same file
 *   node bench/large-store.ts --db /tmp/big.db         build the file once and keep it; later runs with it reuse it
 *
 * The pending events are the newest, as after minutes of `next-heartbeat` wakes with the heartbeat
 * timer off; the older events are consumed in heartbeat-sized ranges. Last, with the probe stopped, one
 * `now` wake asks for a heartbeat over that backlog (the echo agent answers at once): how many
 * heartbeats ran in the next 20 s, how many events they left pending, and how long the loop was held.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { DatabaseSync } from 'node:sqlite';
import { benchWorkDir, ROOT, startIntake, writeIntakeConfig, type Server } from './servers.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '3000000' },
    pending: { type: 'string', default: '2000000' },
    runs: { type: 'string', default: '1000000' },
    outbox: { type: 'string', default: '500000' },
    against: { type: 'string', multiple: true },
    db: { type: 'string' },
    repeat: { type: 'string', default: '3' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  process.stdout.write(
    'usage: node bench/large-store.ts [--events N] [--pending N] [--runs N] [--outbox N] [--db FILE] [--against DIR]... [--repeat N]\n',
  );
  process.exit(0);
}

const count = (s: string, flag: string) => {
  const n = Number(s);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${flag}: not a whole number: ${s}`);
  return n;
};
const EVENTS = count(values.events, 'events');
const PENDING = Math.min(count(values.pending, 'pending'), EVENTS);
const RUNS = count(values.runs, 'runs');
const OUTBOX = Math.min(count(values.outbox, 'outbox'), RUNS);
const REPEAT = Math.max(1, count(values.repeat, 'repeat'));
const roots = [ROOT, ...(values.against ?? []).map((d) => resolve(d))];
for (const r of roots) if (!existsSync(join(r, 'bin/hook-intake.js'))) throw new Error(`--against ${r}: no bin/hook-intake.js there`);

const log = (s: string) => process.stderr.write(`${s}\n`);
const work = benchWorkDir('hook-intake-large-');

/** Rows `1..n` of a table from one INSERT … SELECT over a counter, in one transaction. */
function fill(db: DatabaseSync, n: number, insert: string): void {
  if (n > 0) db.exec(`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${n}) ${insert}`);
}

/** The database, built through this checkout's store (its schema), then filled with bulk inserts. */
async function build(path: string): Promise<void> {
  // where a checkout keeps its SQLite driver and the boundary's packing (older checkouts: src/store/sqlite.ts, runtime/safety.ts)
  const layout = existsSync(join(ROOT, 'src/store/sqlite/store.ts'));
  const { SqliteStore } = await import(join(ROOT, layout ? 'src/store/sqlite/store.ts' : 'src/store/sqlite.ts'));
  const { wrapExternal } = await import(join(ROOT, 'src/runtime/safety.ts'));
  const { packBoundary } = await import(join(ROOT, layout ? 'src/store/sqlite/boundary.ts' : 'src/runtime/safety.ts'));
  await new SqliteStore({ path }).close();
  // a wake's text as intake stores it: wrapped in the safety boundary, kept packed
  const packed = packBoundary(
    wrapExternal('Deploy finished: api-gateway v2.14.3 rolled out to eu-west-1, 12/12 pods healthy, p95 latency 41 ms.', 'Wake'),
  );
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF; BEGIN');
  const t0 = performance.now();
  const consumed = EVENTS - PENDING;
  const q = (s: string) => `'${s.replaceAll("'", "''")}'`;
  fill(
    db,
    EVENTS,
    `INSERT INTO events (seq, id, source, text, text_wrap, status, created_at)
    SELECT i, printf('ev-%08d', i), CASE i % 10 WHEN 0 THEN 'run' WHEN 1 THEN 'github' WHEN 2 THEN 'github' ELSE 'wake' END,
      ${q(packed.rest)} || ' #' || i, ${q(packed.key)}, 'pending', 1700000000000 + i FROM c`,
  );
  // the consumed events in heartbeat-sized ranges of 200, below the watermark
  fill(
    db,
    Math.ceil(consumed / 200),
    `INSERT INTO consumed (to_seq, from_seq, heartbeat_id, consumed_at)
    SELECT min(i * 200, ${consumed}), (i - 1) * 200 + 1, printf('hb-%08d', i), 1700000000000 + i * 200 FROM c`,
  );
  db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('eventsPendingFrom', ?)").run(String(consumed + 1));
  const message =
    'Disk usage on db-3 is at 91% and rising about 2% per hour since 09:00 UTC. Summarise the risk and suggest the next step.';
  fill(
    db,
    RUNS,
    `INSERT INTO runs (seq, id, kind, hook_name, label, trusted, session_key, message, model, timeout_seconds, wake_mode, deliver,
      channel, status, attempts, created_at, started_at, finished_at, reply, summary, error, delivery_status, delivery_reason, delivery_id)
    SELECT i, printf('run-%08d', i), 'hook', 'Monitoring', 'Monitoring', 1, printf('hook:run-%08d', i), ${q(message)} || ' #' || i, 'echo/echo', 600,
      'now', i <= ${OUTBOX}, 'last', CASE WHEN i % 1000 = 0 THEN 'timeout' WHEN i % 50 = 0 THEN 'error' ELSE 'ok' END, 1, 1700000000000 + i,
      1700000000000 + i, 1700000000001 + i, 'Noted: ' || ${q(message)}, 'Noted', NULL, CASE WHEN i <= ${OUTBOX} THEN 'pending' ELSE 'skipped' END,
      CASE WHEN i <= ${OUTBOX} THEN NULL ELSE 'deliver is false' END, CASE WHEN i <= ${OUTBOX} THEN printf('out-%08d', i) END FROM c`,
  );
  fill(
    db,
    OUTBOX,
    `INSERT INTO outbox (id, run_id, channel, to_, text, status, attempts, next_attempt_at, created_at, updated_at)
    SELECT printf('out-%08d', i), printf('run-%08d', i), 'console', NULL, 'Noted: ' || ${q(message)}, CASE WHEN i % 100 = 0 THEN 'failed' ELSE 'sent' END,
      1, 1700000000002 + i, 1700000000001 + i, 1700000000002 + i FROM c`,
  );
  db.exec('COMMIT; PRAGMA wal_checkpoint(TRUNCATE);');
  db.close();
  log(
    `built ${path}: ${EVENTS} events (${PENDING} pending), ${RUNS} runs, ${OUTBOX} deliveries, in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
}

const HOOK_TOKEN = randomBytes(24).toString('hex');
const GATEWAY_TOKEN = randomBytes(24).toString('hex');

/** Sends a `next-heartbeat` wake every 5 ms, one at a time, in its own thread; posts [sentAt, ms] pairs (epoch ms) when told to stop. */
const PROBE = `
const { parentPort, workerData } = require('node:worker_threads');
const body = JSON.stringify({ text: 'probe', mode: 'next-heartbeat' });
const seen = [];
let running = true;
parentPort.on('message', () => { running = false; });
(async () => {
  while (running) {
    const t0 = performance.timeOrigin + performance.now();
    const res = await fetch(workerData.url + '/hooks/wake', { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer ' + workerData.token }, body });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error('wake answered ' + res.status);
    seen.push([t0, performance.timeOrigin + performance.now() - t0]);
    await new Promise((r) => setTimeout(r, 5));
  }
  parentPort.postMessage(seen);
})();
`;

const READS: [string, number][] = [
  ['/metrics', REPEAT],
  ['/api/status', REPEAT],
  ['/api/main/events?status=pending&limit=10000', REPEAT],
  ['/api/main/events?status=consumed&limit=10000', REPEAT],
  ['/api/main/events?limit=10000', REPEAT],
  ['/api/runs?limit=10000', REPEAT],
  ['/api/runs?status=timeout&limit=100', REPEAT],
  ['/api/runs?status=queued', REPEAT],
];

interface Backlog {
  heartbeats: number;
  pendingBefore: number;
  pendingAfter: number;
  ms: number;
  held: number;
}

interface Timed {
  path: string;
  start: number;
  ms: number;
  bytes: number;
  /** The longest the server's event loop was held during the call. */
  held: number;
}

const delayFile = join(work, 'loop-delay.txt');
process.env.LOOP_DELAY_FILE = delayFile;

/** The server's longest event-loop delay since the previous call (bench/loop-delay.mjs). */
async function loopDelay(server: Server): Promise<number> {
  const before = existsSync(delayFile) ? readFileSync(delayFile, 'utf8').split('\n').length : 0;
  process.kill(server.pid, 'SIGUSR2');
  for (;;) {
    const lines = existsSync(delayFile) ? readFileSync(delayFile, 'utf8').split('\n') : [''];
    if (lines.length > before && lines.length > 1) return Number(lines[lines.length - 2]);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const auth = { authorization: `Bearer ${GATEWAY_TOKEN}` };
const status = async (server: Server) =>
  (
    (await (await fetch(`${server.url}/api/status`, { headers: auth })).json()) as {
      counts: { events: { pending: number }; runs: { ok: number } };
    }
  ).counts;

/** One `now` wake over the backlog, then up to 20 s for the pending events to be consumed. */
async function heartbeatOverBacklog(server: Server): Promise<Backlog> {
  const before = await status(server);
  await loopDelay(server);
  const start = Date.now();
  const res = await fetch(`${server.url}/hooks/wake`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${HOOK_TOKEN}` },
    body: JSON.stringify({ text: 'look at the backlog', mode: 'now' }),
  });
  if (res.status !== 200) throw new Error(`the now wake answered ${res.status}`);
  let after = before;
  while (Date.now() - start < 20_000) {
    await new Promise((r) => setTimeout(r, 100));
    after = await status(server);
    if (after.events.pending === 0) break;
  }
  const ms = Date.now() - start;
  return {
    heartbeats: after.runs.ok - before.runs.ok,
    pendingBefore: before.events.pending + 1,
    pendingAfter: after.events.pending,
    ms,
    held: await loopDelay(server),
  };
}

async function measure(server: Server): Promise<{ reads: Timed[]; wakes: [number, number][]; backlog: Backlog }> {
  const worker = new Worker(PROBE, { eval: true, workerData: { url: server.url, token: HOOK_TOKEN } });
  const done = new Promise<[number, number][]>((r, j) => {
    worker.once('message', r);
    worker.once('error', j);
  });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  await sleep(2000); // wakes alone: the baseline
  const reads: Timed[] = [];
  for (const [path, times] of READS)
    for (let i = 0; i < times; i++) {
      await loopDelay(server);
      const start = Date.now();
      const res = await fetch(server.url + path, { headers: auth });
      const bytes = (await res.arrayBuffer()).byteLength;
      const ms = Date.now() - start;
      if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
      reads.push({ path, start, ms, bytes, held: await loopDelay(server) });
      await sleep(300);
    }
  worker.postMessage('stop');
  const wakes = await done;
  await worker.terminate();
  return { reads, wakes, backlog: await heartbeatOverBacklog(server) };
}

const fmt = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));

function report(name: string, r: { reads: Timed[]; wakes: [number, number][]; backlog: Backlog }): void {
  const firstRead = r.reads[0]!.start;
  const idle = r.wakes
    .filter(([t]) => t < firstRead - 100)
    .map(([, ms]) => ms)
    .sort((a, b) => a - b);
  const q = (a: number[], p: number) => a[Math.min(a.length - 1, Math.floor(a.length * p))] ?? 0;
  process.stdout.write(
    `\n${name}: wakes alone p50 ${fmt(q(idle, 0.5))} ms, p99 ${fmt(q(idle, 0.99))} ms, max ${fmt(q(idle, 1))} ms (${idle.length} wakes)\n\n`,
  );
  process.stdout.write(
    '| read | each call, ms | event loop held, longest, ms | slowest wake sent during it, ms | body |\n|---|---|---|---|---|\n',
  );
  const paths = [...new Set(r.reads.map((x) => x.path))];
  for (const path of paths) {
    const calls = r.reads.filter((x) => x.path === path);
    const worst = calls.map((c) =>
      Math.max(0, ...r.wakes.filter(([t, ms]) => t + ms >= c.start && t <= c.start + c.ms).map(([, ms]) => ms)),
    );
    const kb = Math.round(calls[0]!.bytes / 1024);
    const held = calls.map((c) => fmt(c.held)).join(', ');
    process.stdout.write(
      `| \`GET ${path}\` | ${calls.map((c) => fmt(c.ms)).join(', ')} | ${held} | ${worst.map(fmt).join(', ')} | ${kb} KiB |\n`,
    );
  }
  const b = r.backlog;
  process.stdout.write(
    `\nA heartbeat over the backlog: ${b.heartbeats} heartbeat(s) in ${fmt(b.ms)} ms, ${b.pendingBefore} → ${b.pendingAfter} pending events, ` +
      `event loop held at most ${fmt(b.held)} ms.\n`,
  );
}

const dbFile = values.db ? resolve(values.db) : join(work, 'large.db');
if (!existsSync(dbFile)) await build(dbFile);
else log(`reusing ${dbFile}`);

for (const root of roots) {
  const dir = mkdtempSync(join(work, 'serve-'));
  // each checkout serves its own copy, so one's probe wakes do not reach the other
  const path = join(dir, 'hook-intake.db');
  copyFileSync(dbFile, path);
  const files = writeIntakeConfig(dir, {
    gateway: { bind: '127.0.0.1', auth: { token: GATEWAY_TOKEN } },
    hooks: { enabled: true, token: HOOK_TOKEN },
    agents: { defaults: { heartbeat: { every: '0' } } },
    storage: { path },
    logging: { level: 'warn' },
  });
  const name = root === ROOT ? 'this checkout' : basename(root);
  log(`serving with ${name}`);
  writeFileSync(delayFile, '');
  const nodeArgs = ['--import', join(ROOT, 'bench/loop-delay.mjs')];
  const server = await startIntake(dir, files, { name: `hook-intake-${basename(root)}`, root, nodeArgs });
  try {
    report(name, await measure(server));
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
