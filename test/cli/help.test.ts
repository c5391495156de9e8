/**
 * `--version`, and `--help` on the top level and on every command, listing every flag the command
 * accepts, through the real CLI. `--help` only prints: `serve --help` starts nothing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Flag } from '../../src/cli/args.ts';
import { CHECK_OPTIONS } from '../../src/cli/check.ts';
import { SERVE_OPTIONS } from '../../src/cli/serve.ts';
import { TRY_OPTIONS } from '../../src/cli/try.ts';
import { PRUNE_OPTIONS } from '../../src/cli/prune.ts';
import { BIN, cleanup, ROOT, tempDir } from '../helpers/cli.ts';

const dir = tempDir('hook-intake-help-');
afterAll(() => cleanup(dir));

/** Runs the CLI to its end; a command that does not end (a server) is stopped after 10 s. */
function cli(args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args], { cwd: dir, encoding: 'utf8', timeout: 10_000, env: { ...process.env, HOOK_INTAKE_CONFIG: '', HOOK_INTAKE_DATA: '' } });
}

const COMMANDS: [string, Record<string, Flag>][] = [
  ['serve', SERVE_OPTIONS],
  ['check', CHECK_OPTIONS],
  ['try', TRY_OPTIONS],
  ['prune', PRUNE_OPTIONS],
];

describe('hook-intake --version', () => {
  it.each(['--version', '-v'])('%s prints the package version and exits 0', (flag) => {
    const r = cli([flag]);
    expect(r.status).toBe(0);
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(r.stdout).toBe(`hook-intake ${version} (Node.js ${process.version})\n`);
    expect(r.stderr).toBe('');
  });
});

describe('hook-intake --help', () => {
  it.each(COMMANDS)('%s --help lists every flag with what it does, and exits 0', (cmd, options) => {
    const r = cli([cmd, '--help']);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(new RegExp(`^usage: hook-intake ${cmd} `));
    const listed = r.stdout.slice(r.stdout.indexOf('\noptions:\n'));
    for (const [name, o] of Object.entries(options)) {
      const line = listed.split('\n').find((l) => l.includes(`--${name}`));
      expect(line, `--${name}`).toBeDefined();
      if (o.short) expect(line).toContain(`-${o.short}, --${name}`);
      expect(line).toContain(o.help.split(' ').slice(0, 3).join(' '));
    }
    expect(cli(['help', cmd]).stdout).toBe(r.stdout);
    expect(cli([cmd, '-h']).stdout).toBe(r.stdout);
  });

  it('serve --help starts nothing: no listener, no data directory', () => {
    const data = join(dir, 'data');
    const r = cli(['serve', '--help', '--port', '0', '--data', data]);
    expect(r.status).toBe(0);
    expect(r.stdout).not.toMatch(/listening on http:\/\/\d/);
    expect(existsSync(data)).toBe(false);
  });

  it('check --help and try --help load no config', () => {
    for (const cmd of ['check', 'try']) {
      const r = cli([cmd, '--help', '--config', join(dir, 'missing.json5')]);
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^usage: /);
    }
  });

  it('the top level lists every command with every flag of each, and its own', () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const r = cli(args);
      expect(r.status).toBe(0);
      for (const [cmd, options] of COMMANDS) {
        const line = r.stdout.split('\n').find((l) => l.trim().startsWith(`hook-intake ${cmd} `));
        expect(line, cmd).toBeDefined();
        for (const [name, o] of Object.entries(options)) if (name !== 'help') expect(line).toContain(o.short ? `-${o.short}` : `--${name}`);
      }
      expect(r.stdout).toContain('-v, --version');
      expect(r.stdout).toContain('-h, --help');
    }
  });

  it('an unknown flag names it and points to --help', () => {
    const r = cli(['check', '--colour']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("'--colour'");
    expect(r.stderr).toContain('hook-intake check --help');
  });
});

