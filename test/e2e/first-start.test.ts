/**
 * A new user's path: the bundled config, a generated token printed once at a terminal with a curl
 * line that works (and only where it is kept when standard output is not a terminal: a service
 * manager's or container engine's log keeps what is printed), later starts that do not print it
 * again, and SIGTERM / SIGINT ending with exit code 0.
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, cleanup, ROOT, runCli, runInProcess, startCli, tempDir, until } from '../helpers/cli.ts';

const curlWake = (out: string) =>
  out
    .split(/\r?\n/)
    .find((l) => l.trim().startsWith('curl') && l.includes('/hooks/wake'))!
    .trim();

describe('first start on the bundled config', () => {
  it('generates a token, says where it is kept without printing it, with a curl line that works, and keeps it private afterwards', async () => {
    const dir = tempDir();
    copyFileSync(join(ROOT, 'hook-intake.json5'), join(dir, 'hook-intake.json5'));
    try {
      // no --config: the default ./hook-intake.json5 in the working directory is used; standard output is a pipe
      const first = await startCli({ dir, cwd: dir });
      await first.waitFor('/api/main/events');
      const tokenFile = join(first.dataDir, 'hook-token');
      const token = readFileSync(tokenFile, 'utf8').trim();
      expect(token.length).toBeGreaterThanOrEqual(32);
      expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
      const gatewayToken = readFileSync(join(first.dataDir, 'gateway-token'), 'utf8').trim();
      const out = first.output();
      expect(out).toContain(`data directory: ${first.dataDir} (--data)\n`);
      expect(out).not.toContain(token);
      expect(out).not.toContain(gatewayToken);
      expect(out).toContain(`hook token generated and kept in ${tokenFile} (not shown: standard output is not a terminal)`);
      const curlLine = curlWake(out);
      expect(curlLine).toContain(first.url.replace('http://', ''));
      expect(curlLine).toContain(`$(cat ${tokenFile})`);

      const reply = execFileSync('bash', ['-c', curlLine], { encoding: 'utf8' });
      expect(JSON.parse(reply)).toMatchObject({ ok: true, mode: 'now' });
      expect(await first.stop('SIGINT')).toBe(0);
      expect(first.output()).not.toContain(token);

      const second = await startCli({ dir, cwd: dir });
      await second.waitFor('/api/main/events');
      expect(second.output()).not.toContain('generated');
      expect(second.output()).toContain(`$(cat ${tokenFile})`);
      expect(JSON.parse(execFileSync('bash', ['-c', curlWake(second.output())], { encoding: 'utf8' }))).toMatchObject({ ok: true });
      expect(await second.stop('SIGTERM')).toBe(0);
      expect(second.output()).not.toContain(token);
    } finally {
      cleanup(dir);
    }
  });

  // util-linux's `script` runs the server on a pseudo-terminal
  const script = existsSync('/usr/bin/script');
  if (!script) console.info('skipping the first start at a terminal: no /usr/bin/script (util-linux) on this system');
  it.skipIf(!script)('at a terminal, prints the generated token once, with a curl line that works', async () => {
    const dir = tempDir();
    try {
      const data = join(dir, 'data');
      const command = `exec '${process.execPath}' '${BIN}' serve --port 0 --data '${data}' --config '${join(ROOT, 'hook-intake.json5')}'`;
      const proc = spawn('/usr/bin/script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'inherit'] });
      const exited = new Promise((r) => proc.on('exit', r));
      let out = '';
      proc.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
      try {
        await until(() => out.includes('/api/main/events'));
        const token = readFileSync(join(data, 'hook-token'), 'utf8').trim();
        expect(out).toContain(`hook token generated and kept in ${join(data, 'hook-token')} (shown only this once): ${token}`);
        const curlLine = curlWake(out);
        expect(curlLine).toContain(`Bearer ${token}`);
        expect(JSON.parse(execFileSync('bash', ['-c', curlLine], { encoding: 'utf8' }))).toMatchObject({ ok: true });
      } finally {
        // the server ends with its terminal
        proc.kill('SIGTERM');
        await exited;
      }
    } finally {
      cleanup(dir);
    }
  });
});

describe('hook-intake check', () => {
  // the first through the real CLI, the others in this process (runInProcess()): their output and exit code are the point
  it('checks the bundled config before serve has ever run, saying serve will generate the tokens, and writes nothing', async () => {
    const dir = tempDir();
    try {
      // the bundled config leaves hooks.token to the data dir, which does not exist yet
      const r = await runCli(['check', '--config', join(ROOT, 'hook-intake.json5'), '--data', join(dir, 'data')]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('hooks: enabled at /hooks (token not generated yet: serve generates it on first start;');
      expect(r.stdout).toContain('read API: enabled (token not generated yet: serve generates it on first start)');
      expect(existsSync(join(dir, 'data'))).toBe(false);
    } finally {
      cleanup(dir);
    }
  });

  it('lists every problem with file, key path and reason, with a did-you-mean, and exits 1', async () => {
    const dir = tempDir();
    const file = join(dir, 'bad.yaml');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      file,
      ['hooks:', '  enabled: true', '  tokn: abc', '  maxBodyBytes: -1', 'agents:', '  defaults:', '    model: nowhere/x', ''].join('\n'),
    );
    try {
      const r = await runInProcess(['check', '--config', file, '--data', join(dir, 'data')]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`${file}:3: hooks.tokn: unknown key (did you mean "token"?)`);
      expect(r.stderr).toContain(`${file}:4: hooks.maxBodyBytes: must be >= 1`);
    } finally {
      cleanup(dir);
    }
  });

  it('accepts a valid config and summarises it', async () => {
    const dir = tempDir();
    const file = join(dir, 'ok.json5');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, "{ hooks: { enabled: true, token: '${HOOK_TOKEN_FOR_TEST}' }, gateway: { auth: { token: { file: 'gw.txt' } } } }");
    writeFileSync(join(dir, 'gw.txt'), 'a-gateway-token-that-is-long-enough\n');
    process.env.HOOK_TOKEN_FOR_TEST = 'x'.repeat(32);
    try {
      const r = await runInProcess(['check', '--config', file, '--data', join(dir, 'data')]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('hooks: enabled at /hooks');
      expect(r.stdout).toContain('read API: enabled');
      expect(r.stdout).not.toContain('x'.repeat(32));
    } finally {
      delete process.env.HOOK_TOKEN_FOR_TEST;
      cleanup(dir);
    }
  });
});

describe('a second serve on the same data directory', () => {
  it('exits 1 with the database it could not open, and the first server keeps serving', async () => {
    const dir = tempDir();
    copyFileSync(join(ROOT, 'hook-intake.json5'), join(dir, 'hook-intake.json5'));
    try {
      const first = await startCli({ dir, cwd: dir });
      await first.waitFor('/api/main/events');
      // waits out the 5 s a restarting server is given to let go of the file, then refuses
      const second = await runCli(['serve', '--port', '0', '--data', first.dataDir], { cwd: dir });
      expect(second.code).toBe(1);
      expect(second.stderr).toBe(
        `hook-intake: cannot open storage: database ${join(first.dataDir, 'hook-intake.db')} is in use by another process (is another hook-intake serving this data directory?)\n`,
      );
      const curlLine = first
        .output()
        .split('\n')
        .find((l) => l.trim().startsWith('curl') && l.includes('/hooks/wake'))!;
      expect(JSON.parse(execFileSync('bash', ['-c', curlLine.trim()], { encoding: 'utf8' }))).toMatchObject({ ok: true });
      expect(await first.stop('SIGTERM')).toBe(0);
    } finally {
      cleanup(dir);
    }
  });
});

describe('serve on a database another build made', () => {
  it('exits 1 naming the file and saying to move it away, and leaves the file as it was', async () => {
    const dir = tempDir();
    copyFileSync(join(ROOT, 'hook-intake.json5'), join(dir, 'hook-intake.json5'));
    try {
      const dataDir = join(dir, 'data');
      mkdirSync(dataDir);
      const file = join(dataDir, 'hook-intake.db');
      const old = new DatabaseSync(file);
      old.exec('CREATE TABLE events (seq INTEGER PRIMARY KEY); PRAGMA user_version = 12');
      old.close();
      const r = await runCli(['serve', '--port', '0', '--data', dataDir], { cwd: dir });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        `hook-intake: cannot open storage: database ${file} was made by another build of hook-intake (schema version 12`,
      );
      expect(r.stderr).toContain('Move the file away');
      const after = new DatabaseSync(file, { readOnly: true });
      expect(after.prepare('PRAGMA user_version').get()).toEqual({ user_version: 12 });
      after.close();
    } finally {
      cleanup(dir);
    }
  });
});
