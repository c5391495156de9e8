/**
 * `hook-intake check`: the summary lists every named hook in match order and every hook that
 * turns the safety boundary off (docs/mappings.md, "Dry runs and checks"); an invalid config exits 1 with
 * `file: key.path: reason`. The command runs in this process (`runInProcess()`); the real CLI's
 * check runs in first-start.test.ts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, runCli, runInProcess, tempDir } from '../helpers/cli.ts';

const HOOK = 'hook-token-0123456789abcdef0123';
let dir: string;

const write = (name: string, data: unknown) => {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(data));
  return file;
};
const check = (file: string) => runInProcess(['check', '--config', file, '--data', join(dir, 'data')]);

beforeAll(() => {
  dir = tempDir('hook-intake-check-');
  mkdirSync(join(dir, 'transforms'));
  writeFileSync(join(dir, 'transforms', 'shape.ts'), 'export default () => undefined;');
});
afterAll(() => cleanup(dir));

describe('hook-intake check', () => {
  it('reads the data directory next to the config file, not the working directory, and says which it is', async () => {
    const clone = tempDir('hook-intake-clone-');
    const elsewhere = tempDir('hook-intake-elsewhere-');
    try {
      // the working directory has a data directory of its own, with a token, that must not be read
      mkdirSync(join(clone, 'data'));
      writeFileSync(join(clone, 'data', 'hook-token'), 'token-of-the-clone-0123456789abcdef\n');
      mkdirSync(join(elsewhere, 'data'));
      writeFileSync(join(elsewhere, 'data', 'hook-token'), 'token-of-elsewhere-0123456789abcdef\n');
      const file = join(elsewhere, 'x.json5');
      writeFileSync(file, '{ hooks: { enabled: true } }');
      const r = await runCli(['check', '--config', file], { cwd: clone });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`data directory: ${join(elsewhere, 'data')} (next to the config file)\n`);
      expect(r.stdout).toContain('(token from the data dir;');
      expect(r.stdout).toContain(`storage: `);
      expect(r.stdout).toContain(join(elsewhere, 'data', 'hook-intake.db'));
      expect(r.stdout).not.toContain(clone);
      // --data still decides
      const flagged = await runCli(['check', '--config', file, '--data', 'data'], { cwd: clone });
      expect(flagged.stdout).toContain(`data directory: ${join(clone, 'data')} (--data)\n`);
    } finally {
      cleanup(clone);
      cleanup(elsewhere);
    }
  });

  it('lists the hooks in match order and every hook with the safety boundary off', async () => {
    const file = write('unsafe.json', {
      hooks: {
        enabled: true,
        token: HOOK,
        presets: ['gmail'],
        gmail: { allowUnsafeExternalContent: true },
        mappings: [
          { id: 'github', match: { path: 'github' }, transform: { module: 'shape.ts' }, verify: { type: 'github', secret: 's3cret' } },
          { id: 'cron', match: { path: 'cron' }, action: 'wake', allowUnsafeExternalContent: true },
          { id: 'forms', match: { source: 'form' } },
        ],
      },
    });
    const r = await check(file);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe(`config: ${file} is valid`);
    expect(r.stdout).toContain(
      [
        'presets: gmail',
        'named hooks (in match order): 4',
        `  - github (hooks.mappings[0]): agent, path "github", transform ${join(dir, 'transforms', 'shape.ts')}, signature required`,
        '  - cron (hooks.mappings[1]): wake, path "cron"',
        '  - forms (hooks.mappings[2]): agent, matched by payload/headers',
        '  - gmail (preset gmail (mappings[0])): agent, path "gmail", forEach messages',
        'transforms: every module loaded in a worker (the pool grows to 4 when calls wait)',
        'WARNING: the safety boundary is OFF for 2 hook(s) (allowUnsafeExternalContent):',
        '  - cron (hooks.mappings[1])',
        '  - gmail (preset gmail (mappings[0]))',
      ].join('\n'),
    );
    expect(r.stdout).not.toContain('s3cret');
    expect(r.stdout).not.toContain(HOOK);
  });

  it('says the boundary is on for every hook when none turns it off', async () => {
    const r = await check(write('safe.json', { hooks: { enabled: true, token: HOOK, mappings: [{ id: 'a', match: { path: 'a' } }] } }));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'named hooks (in match order): 1\n  - a (hooks.mappings[0]): agent, path "a"\nsafety boundary: on for every hook\n',
    );
    expect(r.stdout).not.toContain('WARNING');
  });

  it("lists the callbacks by the host they post to, never the URL's path or the secret (docs/callbacks.md)", async () => {
    const secret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    const r = await check(
      write('callbacks.json', {
        hooks: { enabled: true, token: HOOK, mappings: [{ id: 'deploys', match: { path: 'deploys' }, callbacks: ['ci'] }] },
        callbacks: [
          { id: 'ci', url: 'https://ci.example.com/in?key=receiver-key', secret, types: ['run.completed'], hooks: [] },
          { id: 'ops', url: 'http://10.0.0.7:8080/events', secret, types: ['run.failed', 'request.rejected'], allowPrivateNetwork: true },
        ],
      }),
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      [
        'callback ci: ci.example.com, run.completed; only the mappings that name it',
        'callback ops: 10.0.0.7:8080, run.failed, request.rejected; every hook; private network allowed',
      ].join('\n'),
    );
    expect(r.stdout).not.toContain('receiver-key');
    expect(r.stdout).not.toContain(secret.slice(6, 20));
  });

  it('exits 1 with every problem as file: key.path: reason', async () => {
    const file = write('broken.json', {
      hooks: {
        enabled: true,
        token: HOOK,
        mappings: [
          { id: 'a', match: { path: 'agent' } },
          { id: 'b', match: { path: 'b', payload: { x: { regex: '(' } } } },
          { id: 'c', transform: { module: 'missing.ts' } },
        ],
      },
    });
    const r = await check(file);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toBe('configuration is invalid:');
    expect(lines.slice(1).map((l) => l.trim().split(': ').slice(0, 2).join(': '))).toEqual([
      `${file}: hooks.mappings[0].match.path`,
      `${file}: hooks.mappings[1].match.payload["x"].regex`,
      `${file}: hooks.mappings[2].transform.module`,
    ]);
  });

  it('refuses a misspelt hooks.gmail key with the nearest known one', async () => {
    const file = write('gmail-typo.json', {
      hooks: { enabled: true, token: HOOK, presets: ['gmail'], gmail: { account: 'ops@example.com', renewEveryMinute: 60 } },
    });
    const r = await check(file);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file}: hooks.gmail.renewEveryMinute: unknown key (did you mean "renewEveryMinutes"?)`);
  });

  it('names the transform file and the mappings that use it when a module fails to load', async () => {
    writeFileSync(join(dir, 'transforms', 'broken.ts'), 'export default (ctx => ');
    const file = write('load.json', {
      hooks: {
        enabled: true,
        token: HOOK,
        mappings: [
          { id: 'x', match: { path: 'x' }, transform: { module: 'broken.ts' } },
          { id: 'y', match: { path: 'y' }, transform: { module: 'broken' } },
        ],
      },
    });
    const r = await check(file);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `  ${join(dir, 'transforms', 'broken.ts')}:1: hooks.mappings[0].transform, hooks.mappings[1].transform: cannot load: `,
    );
  });

  it('gives the line and the message, on one line, of a transform that throws while loading and of one with a syntax error', async () => {
    writeFileSync(join(dir, 'transforms', 'throws.ts'), "const ready: boolean = false;\nthrow new Error('load-time failure');\n");
    writeFileSync(join(dir, 'transforms', 'syntax.mjs'), "export default (ctx) => {\n  return { message: 'broken' ;\n};\n");
    const file = write('load-lines.json', {
      hooks: {
        enabled: true,
        token: HOOK,
        mappings: [
          { id: 'throws', match: { path: 'throws' }, transform: { module: 'throws.ts' } },
          { id: 'syntax', match: { path: 'syntax' }, transform: { module: 'syntax.mjs' } },
        ],
      },
    });
    const r = await check(file);
    expect(r.code).toBe(1);
    const lines = r.stderr.split('\n');
    expect(lines).toContain(`  ${join(dir, 'transforms', 'throws.ts')}:2: hooks.mappings[0].transform: cannot load: load-time failure`);
    expect(lines.find((l) => l.includes('syntax.mjs'))).toMatch(
      new RegExp(`^  ${join(dir, 'transforms', 'syntax.mjs')}:2: hooks\\.mappings\\[1\\]\\.transform: cannot load: \\S.*expected ","$`),
    );
    expect(lines.filter((l) => l.trim())).toHaveLength(3); // the heading and one line each
  });
});
