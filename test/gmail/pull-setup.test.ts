/**
 * `webhooks gmail setup --mode pull` and `webhooks gmail auth` in pull mode (docs/gmail.md,
 * "Pull mode"): the config gets the mode and a pull subscription and no push token, comments
 * kept; the gcloud commands create a pull subscription (no push endpoint) and let the mailbox's
 * account pull from it; auth asks for the Pub/Sub scope beside Gmail's.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import JSON5 from 'json5';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { webhooks } from '../../src/cli/gmail.ts';
import { runAuth } from '../../src/gmail/auth.ts';
import { runSetup } from '../../src/gmail/setup.ts';
import { createLogger } from '../../src/log.ts';
import { cleanup, runCli, tempDir } from '../helpers/cli.ts';
import { GMAIL_READONLY, googleUrls, PUBSUB_SCOPE, startGoogle, type GoogleStandIn } from './google-standin.ts';

let google: GoogleStandIn;
const dirs: string[] = [];
beforeAll(async () => (google = await startGoogle()));
afterAll(async () => {
  await google.close();
  dirs.forEach(cleanup);
});
const newDir = () => {
  const d = tempDir('hook-intake-gmail-pull-setup-');
  dirs.push(d);
  return d;
};
const noGoogle = { fetch: () => Promise.reject(new Error('no call expected')), now: Date.now, schedule: () => () => undefined };
const deps = { fetch: globalThis.fetch, now: Date.now, schedule: () => () => undefined };

/** Runs `webhooks …` in process: its exit code and what it wrote to stderr. */
async function failing(args: string[]): Promise<{ code: number | undefined; err: string }> {
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    const code = await webhooks(args);
    return { code, err: err.mock.calls.join('') };
  } finally {
    err.mockRestore();
  }
}

const YAML_CONFIG = `# hook-intake for the ops mailbox
gateway:
  port: 18789 # the default port
hooks:
  enabled: false # setup turns this on
`;

describe('webhooks gmail setup --mode pull', () => {
  it('writes mode and a pull subscription, no push token, keeps the comments, and prints the commands for a pull subscription', async () => {
    const dir = newDir();
    const file = join(dir, 'hook-intake.yaml');
    writeFileSync(file, YAML_CONFIG);
    const args = [
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
    ];
    const r = await runCli([...args, '--mode', 'pull'], { cwd: dir });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const after = readFileSync(file, 'utf8');
    for (const c of ['# hook-intake for the ops mailbox', '# the default port', '# setup turns this on']) expect(after).toContain(c);
    expect(parseYaml(after).hooks.gmail).toEqual({
      account: 'ops@example.com',
      mode: 'pull',
      topic: 'projects/proj/topics/hook-intake-gmail',
      subscription: 'projects/proj/subscriptions/hook-intake-gmail-pull',
    });
    expect(existsSync(join(dir, 'secrets/gmail-push-token'))).toBe(false);
    expect(r.stdout).toContain(
      'gcloud pubsub subscriptions create hook-intake-gmail-pull --project=proj --topic=hook-intake-gmail --ack-deadline=60',
    );
    expect(r.stdout).toContain(
      'gcloud pubsub subscriptions add-iam-policy-binding hook-intake-gmail-pull --project=proj --member=user:ops@example.com --role=roles/pubsub.subscriber',
    );
    expect(r.stdout).not.toContain('--push-endpoint');
    expect(r.stdout).not.toContain('YOUR-PUBLIC-HOST');
    expect(r.stdout).toContain('pull mode: no public URL');

    // again without --mode: the config's mode is kept
    await runSetup({
      file,
      dataDir: join(dir, 'data'),
      account: 'ops@example.com',
      label: 'Alerts',
      deps: noGoogle,
      log: createLogger('silent'),
    });
    expect(parseYaml(readFileSync(file, 'utf8')).hooks.gmail).toMatchObject({ mode: 'pull', label: 'Alerts' });
  });

  it('switching a push set-up to pull and back gives each mode its own default subscription; a named one is kept', async () => {
    const dir = newDir();
    const file = join(dir, 'hook-intake.json5');
    writeFileSync(file, '// ops\n{\n}\n');
    const setup = (o: Record<string, string>) =>
      runSetup({
        file,
        dataDir: join(dir, 'data'),
        account: 'ops@example.com',
        project: 'proj',
        deps: noGoogle,
        log: createLogger('silent'),
        ...o,
      });
    const gmail = () => JSON5.parse(readFileSync(file, 'utf8')).hooks.gmail;
    await setup({});
    expect(gmail()).toMatchObject({
      subscription: 'projects/proj/subscriptions/hook-intake-gmail-push',
      pushToken: { file: 'secrets/gmail-push-token' },
    });
    const pull = await setup({ mode: 'pull' });
    expect(gmail()).toMatchObject({ mode: 'pull', subscription: 'projects/proj/subscriptions/hook-intake-gmail-pull' });
    expect(pull.commands.at(-2)).toBe(
      'gcloud pubsub subscriptions create hook-intake-gmail-pull --project=proj --topic=hook-intake-gmail --ack-deadline=60',
    );
    await setup({ mode: 'push' });
    expect(gmail()).toMatchObject({ mode: 'push', subscription: 'projects/proj/subscriptions/hook-intake-gmail-push' });
    await setup({ mode: 'pull', subscription: 'mail-in' });
    await setup({ mode: 'pull' });
    expect(gmail().subscription).toBe('projects/proj/subscriptions/mail-in');
    expect(readFileSync(file, 'utf8')).toContain('// ops');
  });

  it('refuses a mode it does not know', async () => {
    const dir = newDir();
    const file = join(dir, 'hook-intake.json5');
    writeFileSync(file, '{}\n');
    const r = await failing(['gmail', 'setup', '--config', file, '--account', 'ops@example.com', '--mode', 'poll']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('hook-intake webhooks gmail setup: --mode must be push or pull');
    expect(readFileSync(file, 'utf8')).toBe('{}\n');
  });

  it('says when the stored refresh token lacks the Pub/Sub scope', async () => {
    const dir = newDir();
    const file = join(dir, 'hook-intake.json5');
    const oauth = { clientId: google.client.id, clientSecret: google.client.secret, refreshToken: google.client.refreshToken };
    writeFileSync(file, JSON.stringify({ hooks: { gmail: { oauth, ...googleUrls(google) } } }));
    google.grantedScopes = [GMAIL_READONLY];
    const r = await runSetup({
      file,
      dataDir: join(dir, 'data'),
      account: 'ops@example.com',
      project: 'proj',
      mode: 'pull',
      deps,
      log: createLogger('silent'),
    });
    expect(r.notes).toContain(
      'the stored refresh token lacks the Pub/Sub scope that pull mode needs: run "hook-intake webhooks gmail auth" again',
    );
    google.grantedScopes = [GMAIL_READONLY, PUBSUB_SCOPE];
    const again = await runSetup({
      file,
      dataDir: join(dir, 'data'),
      account: 'ops@example.com',
      mode: 'pull',
      deps,
      log: createLogger('silent'),
    });
    expect(again.notes.join('\n')).not.toContain('lacks the Pub/Sub scope');
  });
});

describe('webhooks gmail auth in pull mode', () => {
  it("asks for the Pub/Sub scope beside Gmail's", async () => {
    const dir = newDir();
    const file = join(dir, 'hook-intake.json5');
    writeFileSync(file, JSON.stringify({ hooks: { gmail: { account: 'ops@example.com', mode: 'pull', ...googleUrls(google) } } }));
    writeFileSync(
      join(dir, 'client.json'),
      JSON.stringify({ installed: { client_id: google.client.id, client_secret: google.client.secret } }),
    );
    let asked = '';
    const r = await runAuth({
      file,
      dataDir: join(dir, 'data'),
      clientSecretFile: join(dir, 'client.json'),
      deps,
      // the browser: Google's page redirects to the loopback address
      show: (url) => {
        asked = new URL(url).searchParams.get('scope') ?? '';
        void fetch(url).then((res) => res.arrayBuffer());
      },
    });
    expect(asked.split(' ')).toEqual([GMAIL_READONLY, PUBSUB_SCOPE]);
    expect(google.grantedScopes).toEqual([GMAIL_READONLY, PUBSUB_SCOPE]);
    expect(r.notes[0]).toContain(`for ${GMAIL_READONLY} ${PUBSUB_SCOPE}`);
    expect(google.mismatches).toEqual([]);
  });
});
