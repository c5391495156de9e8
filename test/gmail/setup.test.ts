/**
 * `webhooks gmail setup` and `webhooks gmail auth` on real config files: every comment and key of
 * a commented JSON5 or YAML file stays; the tokens go into 0600 files the config points at; the
 * gcloud commands name the push token's file, never the token; auth follows Google's consent URL
 * (the test plays the browser) and stores the refresh token where the config points.
 */
import { spawn } from 'node:child_process';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import JSON5 from 'json5';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { webhooks } from '../../src/cli/gmail.ts';
import { installedAppFlow } from '../../src/gmail/oauth-flow.ts';
import { runSetup } from '../../src/gmail/setup.ts';
import { readState, stateFile } from '../../src/gmail/state.ts';
import { createLogger } from '../../src/log.ts';
import { BIN, cleanup, runCli, tempDir, until } from '../helpers/cli.ts';
import { googleUrls, startGoogle, type GoogleStandIn } from './google-standin.ts';

let google: GoogleStandIn;
const dirs: string[] = [];
beforeAll(async () => (google = await startGoogle()));
afterAll(async () => {
  await google.close();
  dirs.forEach(cleanup);
});
const newDir = () => {
  const d = tempDir('hook-intake-gmail-setup-');
  dirs.push(d);
  return d;
};

const comments = (text: string, marker: RegExp) => text.split('\n').flatMap((l) => marker.exec(l)?.[0] ?? []);
/** Setup without credentials calls nothing outside. */
const noGoogle = { fetch: () => Promise.reject(new Error('no call expected')), now: Date.now, schedule: () => () => undefined };
const mode = (file: string) => statSync(file).mode & 0o777;

const JSON5_CONFIG = `// hook-intake for the ops mailbox
{
  /* the listener */
  gateway: {
    port: 18789, // the default port
  },
  hooks: {
    enabled: false, // setup turns this on
    // presets come from presets/
    presets: [],
    mappings: [
      // alerts from monitoring
      { id: 'alert', match: { path: 'alert' }, action: 'wake', textTemplate: 'Alert {{x}}' },
    ],
  },
  agents: { defaults: { heartbeat: { every: '0' } } }, // no timer
}
`;

describe('webhooks gmail setup', () => {
  it('writes the gmail config into a commented JSON5 file, keeping every comment and key, and prints the gcloud commands without the token', async () => {
    const dir = newDir();
    const file = join(dir, 'hook-intake.json5');
    writeFileSync(file, JSON5_CONFIG);
    const r = await runCli(
      [
        'webhooks',
        'gmail',
        'setup',
        '--config',
        file,
        '--data',
        join(dir, 'data'),
        '--account',
        'ops@example.com',
        '--project',
        'proj',
        '--push-endpoint',
        'https://mail.example.net/gmail-pubsub',
      ],
      { cwd: dir },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const after = readFileSync(file, 'utf8');
    for (const c of comments(JSON5_CONFIG, /(\/\/|\/\*).*$/)) expect(after).toContain(c);
    const before = JSON5.parse(JSON5_CONFIG);
    const data = JSON5.parse(after);
    expect(data.gateway).toEqual(before.gateway);
    expect(data.agents).toEqual(before.agents);
    expect(data.hooks.mappings).toEqual(before.hooks.mappings);
    expect(data.hooks).toMatchObject({ enabled: true, presets: ['gmail'], token: { file: 'secrets/hook-token' } });
    expect(data.hooks.gmail).toEqual({
      account: 'ops@example.com',
      topic: 'projects/proj/topics/hook-intake-gmail',
      subscription: 'projects/proj/subscriptions/hook-intake-gmail-push',
      pushToken: { file: 'secrets/gmail-push-token' },
    });
    const pushToken = readFileSync(join(dir, 'secrets/gmail-push-token'), 'utf8').trim();
    const hookToken = readFileSync(join(dir, 'secrets/hook-token'), 'utf8').trim();
    expect(pushToken).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(mode(join(dir, 'secrets/gmail-push-token'))).toBe(0o600);
    expect(mode(join(dir, 'secrets/hook-token'))).toBe(0o600);
    expect(r.stdout).toContain('gcloud services enable gmail.googleapis.com pubsub.googleapis.com --project=proj');
    expect(r.stdout).toContain('gcloud pubsub topics create hook-intake-gmail --project=proj');
    expect(r.stdout).toContain(
      'gcloud pubsub topics add-iam-policy-binding hook-intake-gmail --project=proj --member=serviceAccount:gmail-api-push@system.gserviceaccount.com --role=roles/pubsub.publisher',
    );
    expect(r.stdout).toContain(
      `gcloud pubsub subscriptions create hook-intake-gmail-push --project=proj --topic=hook-intake-gmail --push-endpoint="https://mail.example.net/gmail-pubsub?token=$(cat '${join(dir, 'secrets/gmail-push-token')}')" --ack-deadline=60`,
    );
    expect(r.stdout).not.toContain(pushToken);
    expect(r.stdout).not.toContain(hookToken);

    // a second run changes nothing but what it is told (setup loads and validates the result each time)
    await runSetup({
      file,
      dataDir: join(dir, 'data'),
      account: 'ops@example.com',
      label: 'Alerts',
      deps: noGoogle,
      log: createLogger('silent'),
    });
    const twice = JSON5.parse(readFileSync(file, 'utf8'));
    expect(twice.hooks.presets).toEqual(['gmail']);
    expect(twice.hooks.gmail).toMatchObject({
      label: 'Alerts',
      topic: 'projects/proj/topics/hook-intake-gmail',
      pushToken: { file: 'secrets/gmail-push-token' },
    });
    expect(readFileSync(join(dir, 'secrets/gmail-push-token'), 'utf8').trim()).toBe(pushToken);
  });

  it('writes into a commented YAML file, keeping every comment and key, and calls users.watch with the stored credentials', async () => {
    const dir = newDir();
    const file = join(dir, 'hook-intake.yaml');
    writeFileSync(join(dir, 'client-secret.txt'), `${google.client.secret}\n`);
    writeFileSync(join(dir, 'refresh-token.txt'), `${google.client.refreshToken}\n`);
    const urls = Object.entries(googleUrls(google))
      .map(([k, v]) => `    ${k}: ${v}\n`)
      .join('');
    const yaml = `# hook-intake for the ops mailbox
gateway:
  port: 18789 # the default port
hooks:
  # tokens live in files
  token: { file: hook-token.txt }
  presets: [] # none yet
  gmail:
    maxBytes: 5000 # keep bodies short
    oauth:
      clientId: ${google.client.id}
      clientSecret: { file: client-secret.txt }
      refreshToken: { file: refresh-token.txt } # from gmail auth
${urls}agents:
  defaults:
    heartbeat:
      every: "0" # no timer
`;
    writeFileSync(join(dir, 'hook-token.txt'), 'hk_0123456789abcdef0123456789\n');
    writeFileSync(file, yaml);
    const before = parseYaml(yaml);
    const res = await runSetup({
      file,
      dataDir: join(dir, 'data'),
      account: 'ops@example.com',
      topic: 'projects/proj/topics/mail',
      deps: { ...noGoogle, fetch },
      log: createLogger('silent'),
    });
    const after = readFileSync(file, 'utf8');
    for (const c of comments(yaml, /#.*$/)) expect(after).toContain(c);
    const data = parseYaml(after);
    expect(data.gateway).toEqual(before.gateway);
    expect(data.agents).toEqual(before.agents);
    expect(data.hooks.token).toEqual({ file: 'hook-token.txt' });
    expect(data.hooks.presets).toEqual(['gmail']);
    expect(data.hooks.gmail).toEqual({
      ...before.hooks.gmail,
      account: 'ops@example.com',
      topic: 'projects/proj/topics/mail',
      subscription: 'projects/proj/subscriptions/hook-intake-gmail-push',
      pushToken: { file: 'secrets/gmail-push-token' },
    });
    expect(google.calls).toContain('gmail.users.watch');
    expect(google.mismatches).toEqual([]);
    expect(readState(stateFile(join(dir, 'data'), 'ops@example.com')).historyId).toBe(String(google.historyId));
    expect(res.notes.join('\n')).toContain('users.watch: Gmail publishes changes of INBOX to projects/proj/topics/mail');
    expect(res.commands.join('\n')).not.toContain(google.client.secret);
  });

  it('refuses to run without --account', async () => {
    const dir = newDir();
    const file = join(dir, 'hook-intake.json5');
    writeFileSync(file, '{}\n');
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await webhooks(['gmail', 'setup', '--config', file])).toBe(1);
      expect(stderr.mock.calls.join('')).toContain('hook-intake webhooks gmail setup: --account is required');
    } finally {
      stderr.mockRestore();
    }
    expect(readFileSync(file, 'utf8')).toBe('{}\n');
  });
});

describe('webhooks gmail setup without --project (docs/gmail.md, setup)', () => {
  /** A folder for PATH holding a `gcloud` that prints `project` for `config get-value project` (nothing: no gcloud). */
  const pathWith = (project?: string) => {
    const bin = newDir();
    if (project !== undefined) {
      const script = join(bin, 'gcloud');
      writeFileSync(script, `#!/bin/sh\n[ "$*" = "config get-value project" ] || exit 2\necho '${project}'\n`);
      chmodSync(script, 0o755);
    }
    return bin;
  };
  const setupWith = async (env: Record<string, string | undefined>) => {
    const dir = newDir();
    const file = join(dir, 'hook-intake.json5');
    const res = await runSetup({ file, dataDir: join(dir, 'data'), account: 'a@b.c', deps: noGoogle, log: createLogger('silent'), env });
    return { res, gmail: JSON5.parse(readFileSync(file, 'utf8')).hooks.gmail };
  };

  it.each([
    [
      'gcloud config',
      { PATH: pathWith('from-gcloud'), GOOGLE_CLOUD_PROJECT: 'from-variable' },
      'from-gcloud',
      'gcloud config get-value project',
    ],
    [
      'GOOGLE_CLOUD_PROJECT when gcloud has none',
      { PATH: pathWith('(unset)'), GOOGLE_CLOUD_PROJECT: 'from-google' },
      'from-google',
      'GOOGLE_CLOUD_PROJECT',
    ],
    ['CLOUDSDK_CORE_PROJECT without gcloud', { PATH: pathWith(), CLOUDSDK_CORE_PROJECT: 'from-sdk' }, 'from-sdk', 'CLOUDSDK_CORE_PROJECT'],
  ])('takes the project from %s', async (_where, env, project, from) => {
    const { res, gmail } = await setupWith(env);
    expect(gmail).toMatchObject({
      topic: `projects/${project}/topics/hook-intake-gmail`,
      subscription: `projects/${project}/subscriptions/hook-intake-gmail-push`,
    });
    expect(res.notes).toContain(`project ${project} (from ${from})`);
    expect(res.commands[1]).toBe(`gcloud pubsub topics create hook-intake-gmail --project=${project}`);
  });

  it('with no project anywhere, writes the config without a topic and prints the commands with <project-id>, exit 0', async () => {
    const dir = newDir();
    const file = join(dir, 'hook-intake.json5');
    const empty = { GOOGLE_CLOUD_PROJECT: '', CLOUDSDK_CORE_PROJECT: '' };
    const r = await runCli(['webhooks', 'gmail', 'setup', '--config', file, '--data', join(dir, 'data'), '--account', 'ops@example.com'], {
      cwd: dir,
      env: { ...empty, PATH: pathWith() },
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const gmail = JSON5.parse(readFileSync(file, 'utf8')).hooks.gmail;
    expect(gmail).toMatchObject({ account: 'ops@example.com', pushToken: { file: 'secrets/gmail-push-token' } });
    expect(gmail.topic).toBeUndefined();
    expect(gmail.subscription).toBeUndefined();
    expect(r.stdout).toContain('no Google Cloud project');
    expect(r.stdout).toContain('run setup again with --project ID');
    expect(r.stdout).toContain('gcloud pubsub topics create hook-intake-gmail --project=<project-id>');
    expect(r.stdout).toContain(
      'gcloud pubsub subscriptions create hook-intake-gmail-push --project=<project-id> --topic=hook-intake-gmail',
    );
    // a second run with the project completes it
    const again = await runCli(
      ['webhooks', 'gmail', 'setup', '--config', file, '--data', join(dir, 'data'), '--account', 'ops@example.com'],
      {
        cwd: dir,
        env: { ...empty, PATH: pathWith('later') },
      },
    );
    expect(again.code).toBe(0);
    expect(JSON5.parse(readFileSync(file, 'utf8')).hooks.gmail.topic).toBe('projects/later/topics/hook-intake-gmail');
  });
});

describe('webhooks gmail auth', () => {
  it('prints the consent URL, catches the redirect on 127.0.0.1 and stores the refresh token (0600) where the config points', async () => {
    const dir = newDir();
    const file = join(dir, 'hook-intake.json5');
    const text = `{
  // the mailbox's settings
  hooks: {
    gmail: {
      account: 'ops@example.com', // watched
${Object.entries(googleUrls(google))
  .map(([k, v]) => `      ${k}: '${v}',\n`)
  .join('')}    },
  },
}
`;
    writeFileSync(file, text);
    writeFileSync(
      join(dir, 'client.json'),
      JSON.stringify({
        installed: { client_id: google.client.id, client_secret: google.client.secret, redirect_uris: ['http://localhost'] },
      }),
    );
    const proc = spawn(
      process.execPath,
      [BIN, 'webhooks', 'gmail', 'auth', '--config', file, '--data', join(dir, 'data'), '--client-secret', join(dir, 'client.json')],
      {
        cwd: dir,
        env: { ...process.env, HOOK_INTAKE_CONFIG: '', HOOK_INTAKE_DATA: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    proc.stdout.on('data', (b: Buffer) => (out += b));
    proc.stderr.on('data', (b: Buffer) => (out += b));
    const exited = new Promise<number | null>((r) => proc.on('exit', r));
    const consent = await until(() => new RegExp(`${google.url}/auth\\?\\S+`).exec(out)?.[0]);
    // push mode (the default): Gmail's read-only scope only
    expect(new URL(consent).searchParams.get('scope')).toBe('https://www.googleapis.com/auth/gmail.readonly');
    // the browser: Google's page redirects to the loopback address, which answers
    const page = await fetch(consent);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('You can close this window');
    expect(await exited).toBe(0);
    const tokenFile = join(dir, 'secrets/gmail-refresh-token');
    expect(readFileSync(tokenFile, 'utf8').trim()).toBe(google.client.refreshToken);
    expect(mode(tokenFile)).toBe(0o600);
    expect(mode(join(dir, 'secrets/gmail-client-secret'))).toBe(0o600);
    const after = readFileSync(file, 'utf8');
    expect(after).toContain("// the mailbox's settings");
    expect(after).toContain('// watched');
    expect(JSON5.parse(after).hooks.gmail.oauth).toEqual({
      refreshToken: { file: 'secrets/gmail-refresh-token' },
      clientId: google.client.id,
      clientSecret: { file: 'secrets/gmail-client-secret' },
    });
    expect(google.grants).toContain('authorization_code');
    expect(out).toContain(`refresh token stored in ${tokenFile} (mode 0600), for https://www.googleapis.com/auth/gmail.readonly`);
    for (const secret of [google.client.secret, google.client.refreshToken, ...google.issued]) expect(out).not.toContain(secret);
    expect(google.mismatches).toEqual([]);
  });

  it('refuses an answer for another sign-in, and fails when the user does not allow access', async () => {
    const flow = (onUrl: (url: URL) => Promise<void>) =>
      installedAppFlow({
        authUrl: `${google.url}/auth`,
        tokenUrl: `${google.url}/token`,
        clientId: google.client.id,
        clientSecret: google.client.secret,
        scopes: ['https://www.googleapis.com/auth/gmail.readonly'],
        deps: noGoogle,
        show: (u) => void onUrl(new URL(u)),
      });
    const loopback = (u: URL) => u.searchParams.get('redirect_uri')!;
    let forged: Response | undefined;
    const denied = flow(async (u) => {
      forged = await fetch(`${loopback(u)}/?state=not-this-one&code=x`);
      await fetch(`${loopback(u)}/?state=${u.searchParams.get('state')}&error=access_denied`);
    });
    await expect(denied).rejects.toThrow('Google did not grant access (access_denied)');
    expect(forged!.status).toBe(400);
  });
});
