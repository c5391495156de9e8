/**
 * `node bench/start.ts`: how long `hook-intake serve` takes to print `listening on`, and how much
 * memory it keeps once idle, on a first start (an empty compile cache) and on a warm start (the
 * cache the first start filled), with the engine settings of deploy/ (bench/servers.ts
 * ENGINE_FLAGS, ENGINE_ENV) unless `--node-defaults`. Starts alternate between this checkout and
 * each `--against` checkout, so that both see the same background load. Linux only (it reads
 * /proc). Run `npm run build` first: the CLI runs dist/.
 *
 *   node bench/start.ts                          5 first and 5 warm starts
 *   node bench/start.ts --starts 8 --against /tmp/base
 *   node bench/start.ts --node-defaults          without the engine settings
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { rssBytes, settle } from './proc.ts';
import { ENGINE_ENV, ENGINE_FLAGS, ROOT } from './servers.ts';

const { values } = parseArgs({
  options: {
    starts: { type: 'string', default: '5' },
    against: { type: 'string', multiple: true },
    'node-defaults': { type: 'boolean' },
  },
});
const STARTS = Number(values.starts);
const roots = [ROOT, ...(values.against ?? []).map((d) => resolve(d))];
const nodeArgs = values['node-defaults'] ? [] : ENGINE_FLAGS;
const engineEnv = values['node-defaults'] ? {} : ENGINE_ENV;

interface Sample {
  startMs: number;
  rssMb: number;
}

/** One start: spawn to `listening on`, then RSS once the process has gone idle; then SIGTERM. */
async function once(root: string, work: string, cache: string): Promise<Sample> {
  const dir = mkdtempSync(join(work, 'run-'));
  const config = join(dir, 'hook-intake.json');
  const token = () => randomBytes(18).toString('hex');
  writeFileSync(config, JSON.stringify({ hooks: { enabled: true, token: token() }, gateway: { auth: { token: token() } } }));
  const t0 = performance.now();
  const proc = spawn(
    process.execPath,
    [...nodeArgs, join(root, 'bin/hook-intake.js'), 'serve', '--config', config, '--data', join(dir, 'data'), '--port', '0'],
    {
      cwd: dir,
      env: { ...process.env, ...engineEnv, NODE_COMPILE_CACHE: cache, HOOK_INTAKE_CONFIG: '', HOOK_INTAKE_DATA: '' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise((r) => proc.on('exit', r));
  let out = '';
  const startMs = await new Promise<number>((res, rej) => {
    proc.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('listening on')) res(performance.now() - t0);
    });
    proc.on('exit', () => rej(new Error(`exited before listening:\n${out}`)));
  });
  proc.stdout.resume();
  await settle(proc.pid!, { windowMs: 500, maxMs: 10_000 });
  const rssMb = rssBytes(proc.pid!) / 2 ** 20;
  proc.kill('SIGTERM');
  await exited;
  return { startMs, rssMb };
}

const work = mkdtempSync(join(tmpdir(), 'bench-start-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const results = new Map<string, { first: Sample[]; warm: Sample[] }>(roots.map((r) => [r, { first: [], warm: [] }]));
for (let i = 0; i < STARTS; i++)
  for (const root of roots) {
    const cache = mkdtempSync(join(work, 'cache-'));
    const r = results.get(root)!;
    r.first.push(await once(root, work, cache));
    r.warm.push(await once(root, work, cache));
  }

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const range = (xs: number[], digits: number) => `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
process.stdout.write(`${STARTS} starts each, node ${process.version}, ${nodeArgs.length ? nodeArgs.join(' ') : "Node's defaults"}\n\n`);
process.stdout.write(
  '| checkout | start | to `listening on`, ms: median (range) | idle RSS, MB: median (range) |\n| --- | --- | ---: | ---: |\n',
);
for (const [root, r] of results)
  for (const kind of ['first', 'warm'] as const) {
    const ms = r[kind].map((s) => s.startMs);
    const mb = r[kind].map((s) => s.rssMb);
    process.stdout.write(
      `| ${root === ROOT ? 'this' : basename(root)} | ${kind} | ${median(ms).toFixed(0)} (${range(ms, 0)}) | ${median(mb).toFixed(1)} (${range(mb, 1)}) |\n`,
    );
  }
