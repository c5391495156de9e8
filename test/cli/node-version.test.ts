/**
 * On a Node older than 24 the CLI says so in one line, with how to get Node 24, instead of the
 * SyntaxError the first import would otherwise stop at.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, cleanup, ROOT, tempDir } from '../helpers/cli.ts';

const dir = tempDir('hook-intake-node-version-');
afterAll(() => cleanup(dir));

/** Runs the CLI with `node` reporting `version` (a preload stands in for an older Node). */
function runAs(version: string, args: string[]) {
  const fake = `Object.defineProperty(process, 'version', { value: 'v${version}' }); Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '${version}' } });`;
  return spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(fake)}`, BIN, ...args], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 15_000,
  });
}

/** The machine's own `node`, when it is older than 24 (a newcomer's situation). */
function oldSystemNode(): string | undefined {
  const r = spawnSync('/usr/bin/node', ['-p', 'process.versions.node'], { encoding: 'utf8' });
  return r.status === 0 && Number(r.stdout.split('.')[0]) < 24 ? '/usr/bin/node' : undefined;
}

describe('the Node version check', () => {
  it.each(['20.20.2', '22.11.0', '23.9.0'])('on Node %s: one line naming Node 24 and how to get it, exit 1, nothing started', (version) => {
    const data = join(dir, `data-${version}`);
    const r = runAs(version, ['serve', '--port', '0', '--data', data]);
    expect(r.status).toBe(1);
    expect(existsSync(data)).toBe(false);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(`hook-intake needs Node.js 24 or newer; this is v${version}`);
    expect(lines[0]).toContain('`npm install` then `npm start`');
    expect(lines[0]).toContain('https://nodejs.org/');
  });

  it('lets Node 24 through', () => {
    const r = runAs('24.0.0', ['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('usage: hook-intake');
  });

  it.skipIf(!oldSystemNode())('says it on the real older Node of this machine, where the first import would fail', () => {
    const r = spawnSync(oldSystemNode()!, [BIN, 'check'], { cwd: ROOT, encoding: 'utf8', timeout: 15_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^hook-intake needs Node\.js 24 or newer; this is v\d+\.\d+\.\d+ \(\/usr\/bin\/node\)\. .*\n$/);
  });
});
