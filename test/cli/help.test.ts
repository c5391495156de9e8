/**
 * `--version`, and `--help` on the top level and on every command, listing every flag the command
 * accepts. `--help` only prints: `serve --help` starts nothing.
 *
 * The commands run in this process (`runInProcess()`);
 * the first tests run the real CLI, to show the process prints and exits the same.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Flag } from '../../src/cli/args.ts';
import { CHECK_OPTIONS } from '../../src/cli/check.ts';
import { SERVE_OPTIONS } from '../../src/cli/serve.ts';
import { TRY_OPTIONS } from '../../src/cli/try.ts';
import { PRUNE_OPTIONS } from '../../src/cli/prune.ts';
import { cleanup, ROOT, runCli, runInProcess, tempDir } from '../helpers/cli.ts';

const dir = tempDir('hook-intake-help-');
afterAll(() => cleanup(dir));

const realCli = (args: string[]) => runCli(args, { cwd: dir });
const cli = runInProcess;

describe('the real CLI', () => {
  it.each([{ args: ['--version'] }, { args: ['check', '--colour'] }])(
    '$args: prints and exits as the command run in this process does',
    async ({ args }) => {
      const real = await realCli(args);
      expect(real).toEqual(await cli(args));
    },
  );

  it('serve --help starts nothing: no listener, no data directory', async () => {
    const data = join(dir, 'data');
    const args = ['serve', '--help', '--port', '0', '--data', data];
    const r = await realCli(args);
    expect(r).toEqual(await cli(args));
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/listening on http:\/\/\d/);
    expect(existsSync(data)).toBe(false);
  });
});

const COMMANDS: [string, Record<string, Flag>][] = [
  ['serve', SERVE_OPTIONS],
  ['check', CHECK_OPTIONS],
  ['try', TRY_OPTIONS],
  ['prune', PRUNE_OPTIONS],
];

describe('hook-intake --version', () => {
  it.each(['--version', '-v'])('%s prints the package version and exits 0', async (flag) => {
    const r = await cli([flag]);
    expect(r.code).toBe(0);
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(r.stdout).toBe(`hook-intake ${version} (Node.js ${process.version})\n`);
    expect(r.stderr).toBe('');
  });
});

describe('hook-intake --help', () => {
  it.each(COMMANDS)('%s --help lists every flag with what it does, and exits 0', async (cmd, options) => {
    const r = await cli([cmd, '--help']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(new RegExp(`^usage: hook-intake ${cmd} `));
    const listed = r.stdout.slice(r.stdout.indexOf('\noptions:\n'));
    for (const [name, o] of Object.entries(options)) {
      const line = listed.split('\n').find((l) => l.includes(`--${name}`));
      expect(line, `--${name}`).toBeDefined();
      if (o.short) expect(line).toContain(`-${o.short}, --${name}`);
      expect(line).toContain(o.help.split(' ').slice(0, 3).join(' '));
    }
    expect((await cli(['help', cmd])).stdout).toBe(r.stdout);
    expect((await cli([cmd, '-h'])).stdout).toBe(r.stdout);
  });

  it('check --help and try --help load no config', async () => {
    for (const cmd of ['check', 'try']) {
      const r = await cli([cmd, '--help', '--config', join(dir, 'missing.json5')]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^usage: /);
    }
  });

  it('the top level lists every command with every flag of each, and its own', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const r = await cli(args);
      expect(r.code).toBe(0);
      for (const [cmd, options] of COMMANDS) {
        const line = r.stdout.split('\n').find((l) => l.trim().startsWith(`hook-intake ${cmd} `));
        expect(line, cmd).toBeDefined();
        for (const [name, o] of Object.entries(options)) if (name !== 'help') expect(line).toContain(o.short ? `-${o.short}` : `--${name}`);
      }
      expect(r.stdout).toContain('-v, --version');
      expect(r.stdout).toContain('-h, --help');
    }
  });

  it('an unknown flag names it and points to --help', async () => {
    const r = await cli(['check', '--colour']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("'--colour'");
    expect(r.stderr).toContain('hook-intake check --help');
  });
});
