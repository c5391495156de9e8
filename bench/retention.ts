/**
 * `node bench/retention.ts`: does retention keep the database bounded, and does pruning slow intake?
 *
 * Two servers of this checkout take the same sustained, paced agent load side by side (runs by the
 * echo agent, replies delivered to the console channel, every request kept): one with a short
 * retention pruned every second, one with the default retention (nothing old enough to prune). The
 * database's size (file plus write-ahead log) of each is sampled as the load runs. Then both take
 * closed-loop load, as fast as possible, in interleaved rounds: intake throughput and p99 with
 * pruning running against pruning idle.
 *
 * Time is scaled: `retention.*Days` take fractions of a day, so a retention of `--retention-seconds`
 * stands for the 30 days of the default (an hour of bench at 30 s stands for 60 days of service).
 *
 *   node bench/retention.ts [--minutes 4] [--rate 300] [--retention-seconds 30] [--sample-seconds 20]
 *                           [--rounds 3] [--duration 8]
 */
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { benchWorkDir, killAll, startIntake, writeIntakeConfig, type Server } from './servers.ts';
import { runLoad, type LoadResult } from './load.ts';
import { settle } from './proc.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '4' },
    rate: { type: 'string', default: '300' },
    'retention-seconds': { type: 'string', default: '30' },
    'sample-seconds': { type: 'string', default: '20' },
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '8' },
  },
});
const MINUTES = Number(values.minutes);
const RATE = Number(values.rate);
const RETENTION_S = Number(values['retention-seconds']);
const SAMPLE_S = Number(values['sample-seconds']);
const ROUNDS = Number(values.rounds);
const DURATION = Number(values.duration);

const HOOK_TOKEN = randomBytes(24).toString('hex');
const days = RETENTION_S / 86_400;
const config = (pruned: boolean) => ({
  gateway: { bind: '127.0.0.1', auth: { token: randomBytes(24).toString('hex') } },
  hooks: { enabled: true, token: HOOK_TOKEN, maxQueuedRuns: 10_000_000 },
  channels: { console: {} },
  session: { defaultRoute: { channel: 'console' } },
  // a heartbeat consumes the runs' summary events (pending events are never pruned); scaled like retention
  agents: { defaults: { heartbeat: { every: '10s' } } },
  logging: { level: 'warn' },
  // so that the bench can count the rows while the server runs (both servers alike)
  storage: { locking: 'normal' },
  retention: pruned ? { runsDays: days, eventsDays: days, requestsDays: days, pruneEverySeconds: 1 } : { pruneEverySeconds: 1 },
});
// a run per request, each in its own session (a transcript that goes idle), a reply delivered
const BODY = JSON.stringify({
  message: 'Disk usage on db-3 is at 91% and rising about 2% per hour since 09:00 UTC. Summarise the risk and suggest the next step.',
  name: 'Monitoring',
});

const work = benchWorkDir('hook-intake-retention-bench-');
const log = (s: string) => process.stderr.write(`${s}\n`);
const mb = (bytes: number) => (bytes / 1048576).toFixed(1);

function dbBytes(dataDir: string): number {
  let n = 0;
  for (const f of ['hook-intake.db', 'hook-intake.db-wal']) {
    try {
      n += statSync(join(dataDir, f)).size;
    } catch {
      // no WAL yet
    }
  }
  return n;
}

const TABLES = ['runs', 'events', 'messages', 'outbox', 'requests', 'texts'];

/** Rows per table, read live (storage.locking normal lets another process read). */
function rowCounts(dataDir: string): number[] {
  const db = new DatabaseSync(join(dataDir, 'hook-intake.db'), { readOnly: true });
  try {
    db.exec('PRAGMA busy_timeout = 5000');
    return TABLES.map((t) => Number((db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n));
  } catch {
    return TABLES.map(() => NaN);
  } finally {
    db.close();
  }
}

function load(server: Server, dir: string, seconds: number, rate?: number): Promise<LoadResult> {
  return runLoad({
    url: `${server.url}/hooks/agent`,
    token: HOOK_TOKEN,
    bodyFile: join(dir, 'body.json'),
    contentType: 'application/json',
    headers: {},
    connections: rate ? 10 : 50,
    seconds,
    ...(rate ? { rate } : {}),
    dir,
  });
}

async function main(): Promise<void> {
  const servers: { name: string; server: Server; dir: string; data: string }[] = [];
  for (const [name, pruned] of [
    ['pruning', true],
    ['no pruning', false],
  ] as const) {
    const dir = mkdtempSync(join(work, `${name.replace(/\W+/g, '-')}-`));
    const files = writeIntakeConfig(dir, config(pruned));
    writeFileSync(join(dir, 'body.json'), BODY);
    const server = await startIntake(dir, files, { name });
    servers.push({ name, server, dir, data: `${files.dataDir}-${name.replace(/\W+/g, '-')}` });
  }
  log(`retention ${RETENTION_S} s (stands for 30 days), ${RATE} req/s to each server for ${MINUTES} min, a sample every ${SAMPLE_S} s`);

  // sustained load, sampled
  const samples: { minutes: number; sizes: number[]; rows: number[] }[] = [
    { minutes: 0, sizes: servers.map((s) => dbBytes(s.data)), rows: rowCounts(servers[0]!.data) },
  ];
  const loads = servers.map((s) => load(s.server, s.dir, MINUTES * 60, RATE));
  const t0 = Date.now();
  const timer = setInterval(() => {
    const sizes = servers.map((s) => dbBytes(s.data));
    const rows = rowCounts(servers[0]!.data);
    samples.push({ minutes: (Date.now() - t0) / 60_000, sizes, rows });
    log(`  ${((Date.now() - t0) / 60_000).toFixed(2)} min: ${sizes.map(mb).join(' MB, ')} MB; rows ${rows.join(', ')}`);
  }, SAMPLE_S * 1000);
  const sustained = await Promise.all(loads);
  clearInterval(timer);
  samples.push({ minutes: (Date.now() - t0) / 60_000, sizes: servers.map((s) => dbBytes(s.data)), rows: rowCounts(servers[0]!.data) });

  // intake throughput, interleaved rounds, pruning running in one and idle in the other
  const rounds: Record<string, LoadResult[]> = Object.fromEntries(servers.map((s) => [s.name, []]));
  for (let r = 0; r < ROUNDS; r++)
    for (const s of servers) {
      await settle(s.server.pid, { maxMs: 60_000 });
      rounds[s.name]!.push(await load(s.server, s.dir, DURATION));
    }
  for (const s of servers) await s.server.stop();

  const out: string[] = [];
  out.push(
    `Sustained load: ${RATE} agent requests/s to each server for ${MINUTES} min (${sustained.map((l, i) => `${servers[i]!.name}: ${l.requests} requests, ${l.badStatus + l.socketErrors} failed`).join('; ')}); retention ${RETENTION_S} s, pruned every second.`,
  );
  out.push('');
  out.push(
    `| minutes | MB, retention ${RETENTION_S} s | MB, default retention (nothing pruned) | rows, retention ${RETENTION_S} s (${TABLES.join(', ')}) |`,
  );
  out.push('|--------:|------:|------:|---|');
  for (const s of samples) out.push(`| ${s.minutes.toFixed(1)} | ${mb(s.sizes[0]!)} | ${mb(s.sizes[1]!)} | ${s.rows.join(', ')} |`);
  out.push('');
  out.push(`Closed-loop intake, ${ROUNDS} interleaved rounds of ${DURATION} s, 50 connections (median of rounds):`);
  out.push('');
  out.push('| server | requests/s | p99 ms |');
  out.push('|---|---:|---:|');
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const s of servers) {
    const rs = rounds[s.name]!;
    out.push(`| ${s.name} | ${Math.round(median(rs.map((r) => r.requests / r.seconds)))} | ${median(rs.map((r) => r.p99Ms)).toFixed(1)} |`);
  }
  out.push('');
  out.push(
    `load average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  process.stdout.write(`${out.join('\n')}\n`);
}

main().catch((err) => {
  killAll();
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
