/**
 * `npm run bench`: hook-intake against a bare node:http server on the same
 * machine, scenario by scenario, in interleaved rounds (bare, ours, bare,
 * ours, …) so that both see the same background load. The headline figure is
 * server CPU time per request from /proc, as a ratio to the bare server.
 *
 *   npm run bench                    quick run (~2 min)
 *   npm run bench -- --full          longer rounds, more of them (~20 min)
 *   npm run bench -- --only wake,agent --rounds 4 --duration 8
 *   npm run bench -- --profile /tmp/prof   also write a CPU profile of hook-intake per scenario
 *   npm run bench -- --rate 2000         paced load: about 2000 req/s per scenario instead of as fast as possible
 *   npm run bench -- --koa               also run a one-middleware Koa server doing the bare server's work
 *   npm run bench -- --redis             also run hook-intake on the Redis driver (a redis-server of its own, whose
 *                                          CPU counts as the driver's) in the same interleaved rounds
 *   npm run bench -- --no-request-log     also run this checkout with `retention.requestsDays: 0` (no request
 *                                          kept for the console's log) in the same interleaved rounds
 *   npm run bench -- --against /tmp/old    also run another checkout (with its node_modules) in the
 *                                          same interleaved rounds: before/after of a change
 *
 * Env: BENCH_ROUNDS, BENCH_DURATION, BENCH_WARMUP (seconds) give the same settings as the flags.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { SCENARIOS, type Scenario } from './scenarios.ts';
import { benchWorkDir, ROOT, startBare, startKoa, startIntake, writeIntakeConfig, checkConfig, type Server } from './servers.ts';
import { runLoad, wrkVersion, type LoadResult } from './load.ts';
import { cpuMicros, sampleRss, settle } from './proc.ts';
import { startBenchRedis, type BenchRedis } from './redis.ts';
import { machineInfo, markdown, summarize, type Round, type ScenarioResult, type ServerResult } from './report.ts';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    full: { type: 'boolean' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    only: { type: 'string' },
    out: { type: 'string' },
    profile: { type: 'string' },
    against: { type: 'string', multiple: true },
    rate: { type: 'string' },
    koa: { type: 'boolean' },
    redis: { type: 'boolean' },
    'no-request-log': { type: 'boolean' },
    list: { type: 'boolean' },
  },
});

if (values.list) {
  for (const s of SCENARIOS) process.stdout.write(`${s.id.padEnd(18)} ${s.label}${s.requires ? ` (needs ${s.requires})` : ''}\n`);
  process.exit(0);
}

const preset = values.full ? { rounds: 5, duration: 10, warmup: 3 } : { rounds: 2, duration: 2, warmup: 1 };
const num = (flag: string | undefined, env: string | undefined, dflt: number) => {
  const n = Number(flag ?? env ?? dflt);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`not a positive number: ${flag ?? env}`);
  return n;
};
const ROUNDS = Math.round(num(values.rounds, process.env.BENCH_ROUNDS, preset.rounds));
const DURATION = Math.round(num(values.duration, process.env.BENCH_DURATION, preset.duration));
const WARMUP = Math.round(num(values.warmup, process.env.BENCH_WARMUP, preset.warmup));

const RATE = values.rate === undefined ? undefined : num(values.rate, undefined, 0);

const only = values.only?.split(',').map((s) => s.trim());
const selected = only ? SCENARIOS.filter((s) => only.includes(s.id)) : SCENARIOS;
if (only && selected.length !== only.length) {
  process.stderr.write(`unknown scenario in --only; known: ${SCENARIOS.map((s) => s.id).join(', ')}\n`);
  process.exit(2);
}

const against = (values.against ?? []).map((d) => resolve(d));
for (const d of against)
  if (!existsSync(join(d, 'bin/hook-intake.js'))) {
    process.stderr.write(`--against ${d}: no bin/hook-intake.js there\n`);
    process.exit(2);
  }

const wrk = wrkVersion();
if (!wrk) {
  process.stderr.write(
    'bench: wrk not found on PATH. Install it (Debian/Ubuntu: apt-get install wrk; macOS: brew install wrk) and run again.\n',
  );
  process.exit(2);
}

const HOOK_TOKEN = randomBytes(24).toString('hex');
const GATEWAY_TOKEN = randomBytes(24).toString('hex');

/** hook-intake as the bench runs it: hooks on, durable SQLite storage, echo agent, console channel, info logs. */
function baseConfig(): Record<string, unknown> {
  return {
    gateway: { bind: '127.0.0.1', auth: { token: GATEWAY_TOKEN } },
    hooks: { enabled: true, token: HOOK_TOKEN },
    logging: { level: 'info' },
  };
}

const isObject = (o: unknown): o is Record<string, unknown> => typeof o === 'object' && o !== null && !Array.isArray(o);

/** Deep merge of config objects: objects merge, arrays and values replace. */
function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] = isObject(prev) && isObject(v) ? merge(prev, v) : v;
  }
  return out;
}

const work = benchWorkDir('hook-intake-bench-');

const log = (s: string) => process.stderr.write(`${s}\n`);

async function probe(s: Scenario, url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url + s.path, {
    method: 'POST',
    headers: { 'content-type': s.contentType ?? 'application/json', authorization: `Bearer ${HOOK_TOKEN}`, ...s.headers },
    body: s.body,
  });
  return { status: res.status, text: (await res.text()).slice(0, 200) };
}

function load(server: Server, s: Scenario, bodyFile: string, dir: string, seconds: number): Promise<LoadResult> {
  return runLoad({
    url: server.url + s.path,
    token: HOOK_TOKEN,
    bodyFile,
    contentType: s.contentType ?? 'application/json',
    headers: s.headers ?? {},
    connections: s.connections,
    seconds,
    ...(RATE ? { rate: RATE } : {}),
    dir,
  });
}

/** One measured round: CPU from before the load until the server has finished the work it caused. */
async function round(server: Server, s: Scenario, bodyFile: string, dir: string): Promise<Round> {
  await settle(server.pid);
  const cpu = () => [server.pid, ...(server.extraPids ?? [])].reduce((n, pid) => n + cpuMicros(pid), 0);
  const cpu0 = cpu();
  const rss = sampleRss(server.pid);
  const r = await load(server, s, bodyFile, dir, DURATION);
  const settled = await settle(server.pid, { maxMs: 120_000 });
  const cpu1 = cpu();
  return { ...r, cpuMicros: cpu1 - cpu0, rssBytes: rss.stop(), settled };
}

async function runScenario(s: Scenario): Promise<ScenarioResult> {
  const dir = mkdtempSync(join(work, `${s.id}-`));
  const files = writeIntakeConfig(dir, merge(baseConfig(), s.config ?? {}), s.files);
  // Checked by each checkout before any server starts: `check` loads the plugins and leaves them
  // compiled in jiti's cache, so no server is measured with a compiler a first start left resident
  // (older checkouts kept jiti's in whichever server started first; docs/performance.md, "Memory").
  const refused = checkConfig(files);
  if (refused) {
    if (s.requires)
      return { scenario: s, skipped: `\`hook-intake check\` refuses the config, so ${s.requires} are not supported yet (${refused})` };
    throw new Error(`${s.id}: \`hook-intake check\` refuses the config: ${refused}`);
  }
  for (const root of against) checkConfig(files, root);
  const bodyFile = join(dir, 'body.json');
  writeFileSync(bodyFile, s.body);
  const servers: Server[] = [];
  let redis: BenchRedis | undefined;
  try {
    servers.push(await startBare(dir, HOOK_TOKEN));
    if (values.koa) servers.push(await startKoa(dir, HOOK_TOKEN));
    const nodeArgs = values.profile
      ? ['--cpu-prof', `--cpu-prof-dir=${values.profile}`, `--cpu-prof-name=${s.id}-${Date.now()}.cpuprofile`]
      : [];
    servers.push(await startIntake(dir, files, { name: 'hook-intake', nodeArgs }));
    if (values['no-request-log']) {
      // what keeping each request costs: the same config with nothing kept, in a directory of its own
      const ndir = join(dir, 'no-request-log');
      mkdirSync(ndir);
      const nfiles = writeIntakeConfig(ndir, merge(merge(baseConfig(), s.config ?? {}), { retention: { requestsDays: 0 } }), s.files);
      servers.push(await startIntake(ndir, nfiles, { name: 'hook-intake (no request log)' }));
    }
    for (const root of against) servers.push(await startIntake(dir, files, { name: `hook-intake@${basename(root)}`, root }));
    if (values.redis) {
      // the same config on the Redis driver, beside the scenario's files
      const rdir = join(dir, 'redis');
      mkdirSync(rdir);
      redis = await startBenchRedis(rdir);
      const rfiles = writeIntakeConfig(
        rdir,
        merge(merge(baseConfig(), s.config ?? {}), { storage: { driver: 'redis', url: redis.url } }),
        s.files,
      );
      const refusedRedis = checkConfig(rfiles);
      if (refusedRedis) throw new Error(`${s.id}: \`hook-intake check\` refuses the Redis config: ${refusedRedis}`);
      servers.push({ ...(await startIntake(rdir, rfiles, { name: 'hook-intake (redis)' })), extraPids: [redis.pid] });
    }

    for (const server of servers) {
      const p = await probe(s, server.url);
      const reference = !server.name.startsWith('hook-intake');
      const expected = reference ? 200 : s.expectStatus;
      if (p.status === expected) continue;
      const why = `${server.name} answered ${p.status} ${p.text}`;
      if (s.requires && !reference) return { scenario: s, skipped: `${s.requires} are not supported by \`serve\` yet: ${why}` };
      throw new Error(`${s.id}: expected ${expected}, ${why}`);
    }

    for (const server of servers) {
      await load(server, s, bodyFile, dir, WARMUP);
      await settle(server.pid);
    }
    const rounds: Round[][] = servers.map(() => []);
    for (let i = 0; i < ROUNDS; i++) {
      const line: string[] = [];
      for (const [k, server] of servers.entries()) {
        const r = await round(server, s, bodyFile, dir);
        rounds[k]!.push(r);
        line.push(`${server.name} ${(r.cpuMicros / r.requests).toFixed(1)}`);
      }
      log(`  round ${i + 1}/${ROUNDS}, CPU µs/req: ${line.join(', ')}`);
    }
    const perReq = (r: Round) => r.cpuMicros / r.requests;
    const results: ServerResult[] = servers.map((server, k) => ({
      name: server.name,
      summary: summarize(rounds[k]!),
      pairRatios: rounds[k]!.map((r, i) => perReq(rounds[0]![i]!) / perReq(r)),
    }));
    return { scenario: s, servers: results };
  } catch (err) {
    for (const server of servers.slice(1)) log(`${server.name} output (last lines):\n${server.tail()}`);
    throw err;
  } finally {
    const codes = await Promise.all(servers.map((server) => server.stop()));
    for (const [k, server] of servers.entries())
      if (k > 0 && codes[k] !== 0) log(`warning: ${server.name} exited with ${codes[k]} on SIGTERM:\n${server.tail()}`);
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const settings =
  `${ROUNDS} rounds × ${DURATION} s per server and scenario, ${WARMUP} s warm-up, ` +
  (RATE ? `paced at about ${RATE} req/s` : 'closed loop as fast as possible');
const machine = machineInfo(wrk, settings);
log(`bench: ${settings}; ${selected.length} scenario(s)`);
const results: ScenarioResult[] = [];
for (const s of selected) {
  log(`${s.id}: ${s.label}, ${s.connections} connections`);
  const r = await runScenario(s);
  if (r.skipped) log(`  skipped: ${r.skipped}`);
  results.push(r);
}
machine.loadAfter = loadavg()
  .map((l) => l.toFixed(2))
  .join(' ');

const table = markdown(machine, results);
process.stdout.write(`\n${table}`);
const outFile = values.out ?? join(ROOT, 'bench/results', `${machine.date.replace(/:/g, '-')}.md`);
mkdirSync(join(outFile, '..'), { recursive: true });
writeFileSync(outFile, table);
writeFileSync(`${outFile.replace(/\.md$/, '')}.json`, JSON.stringify({ machine, results }, null, 2));
log(`\nresults written to ${outFile}`);
