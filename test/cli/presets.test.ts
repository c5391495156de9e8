/**
 * `hook-intake presets` lists and shows the presets; `hook-intake sources add NAME` wires one source
 * into the config file, keeping its comments, with its secret in a file of mode 0600, and prints the
 * provider's steps (docs/presets.md, "Adding a source").
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { cleanup, runInProcess, tempDir } from '../helpers/cli.ts';

const dir = tempDir('hook-intake-presets-cli-');
const empty = join(dir, 'empty.json5');
writeFileSync(empty, '{}\n');
afterAll(() => cleanup(dir));

describe('hook-intake presets', () => {
  it('lists the built-in presets with what they check', async () => {
    const r = await runInProcess(['presets', '--config', empty]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^github +GitHub: issues, pull requests/m);
    expect(r.stdout).toMatch(/^gmail +One agent run per new Gmail message/m);
  });

  it('shows a preset: its signature, options, event types and a sample message as the agent sees it', async () => {
    const r = await runInProcess(['presets', 'show', 'github', '--config', empty]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('signature: github (option secret is required)');
    expect(r.stdout).toContain('options: name, secret, secrets, path, events, action, channel, to, model, sessionKey, maxChars');
    expect(r.stdout).toMatch(/event types \(\d+\): .*pull_request, pull_request_review/);
    expect(r.stdout).toContain(
      'sample message (fixtures/pull_request.opened.json, x-github-event: pull_request):\nPull request #2 in Codertocat/Hello-World opened by Codertocat',
    );
    const keyed = await runInProcess(['presets', 'show', 'sendgrid', '--config', empty]);
    expect(keyed.code).toBe(0);
    expect(keyed.stdout).toContain('signature: sendgrid (option publicKey is required)');
    expect(keyed.stdout).toContain('options: name, path, events, action, channel, to, model, sessionKey, maxChars, publicKey');
    expect(keyed.stdout).toContain('sample message (fixtures/bounce.json):\nEmail to alex@example.com bounced');
    const json = JSON.parse((await runInProcess(['presets', 'show', 'github', '--json', '--config', empty])).stdout);
    expect(json).toMatchObject({
      name: 'github',
      signature: 'github',
      secretRequired: true,
      idempotencyKey: '{{headers.x-github-delivery}}',
    });
  });

  it('runs a sample kept as {source, payload, headers} with its payload and headers', async () => {
    const stripe = await runInProcess(['presets', 'show', 'stripe', '--config', empty]);
    expect(stripe.stdout).toContain(
      'sample message (fixtures/charge.succeeded.assembled.json):\nCharge of 1.00 USD succeeded for Jenny Rosen',
    );
    // the topic and the shop travel in the fixture's headers
    const shopify = await runInProcess(['presets', 'show', 'shopify', '--config', empty]);
    expect(shopify.stdout).toContain('sample message (fixtures/orders.create.json):\nOrder #9999 created for John Smith');
    expect(shopify.stdout).toContain('https://johns-apparel.myshopify.com/admin/orders/820982911946154508');
  });

  it('says which preset was meant when the name is misspelt', async () => {
    const r = await runInProcess(['presets', 'show', 'gihtub', '--config', empty]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('hook-intake presets: no preset "gihtub" (did you mean "github"?)\n');
  });
});

describe('hook-intake sources add', () => {
  it('writes the entry and a hook token into the config, keeping its comments, and prints the steps', async () => {
    const file = join(dir, 'one.json5');
    writeFileSync(file, '// my service\n{\n  // gateway settings\n  gateway: { port: 18790 },\n}\n');
    const r = await runInProcess([
      'sources',
      'add',
      'github',
      '--config',
      file,
      '--events',
      'issues,pull_request',
      '--url',
      'https://h.example',
    ]);
    expect(r.code).toBe(0);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('// my service');
    expect(text).toContain('// gateway settings');
    const secretFile = join(dir, 'secrets', 'github-webhook-secret');
    expect(statSync(secretFile).mode & 0o777).toBe(0o600);
    expect(r.stdout).toContain(`secret: a new random one, written to ${secretFile} (mode 0600)`);
    expect(r.stdout).toContain('  - Payload URL: https://h.example/hooks/github');
    expect(r.stdout).toContain('Events to send (the others would be answered 204): issues, pull_request');
    // the secret itself is printed nowhere; it is in the file
    const secret = readFileSync(secretFile, 'utf8').trim();
    expect(r.stdout + r.stderr).not.toContain(secret);

    const loaded = loadConfig({ file, dataDir: join(dir, 'data') });
    expect(loaded.config.hooks.enabled).toBe(true);
    expect(loaded.config.hooks.presets).toEqual([{ name: 'github', events: ['issues', 'pull_request'], secret }]);
  });

  it('takes the secret from the environment with --secret-env, on a path of its own; refuses a path taken', async () => {
    const file = join(dir, 'two.json5');
    writeFileSync(file, '{ hooks: { enabled: true, token: "hook-token-0123456789abcdef0123", presets: ["gmail"] } }\n');
    const r = await runInProcess(['sources', 'add', 'github', '--config', file, '--secret-env', 'GH_SECRET', '--path', 'gh-oss']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const loaded = loadConfig({ file, env: { GH_SECRET: 'from-env' } });
    expect(loaded.config.hooks.presets).toEqual(['gmail', { name: 'github', path: 'gh-oss', secret: 'from-env' }]);
    const again = await runInProcess(['sources', 'add', 'github', '--config', file, '--secret', 's', '--path', 'gh-oss']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already has an entry on path "gh-oss" (github)');
  });

  it("writes a public-key preset's key (SendGrid's) from --secret, and refuses to make one up", async () => {
    const file = join(dir, 'keyed.json5');
    writeFileSync(file, '{}\n');
    const none = await runInProcess(['sources', 'add', 'sendgrid', '--config', file]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('the "sendgrid" preset checks the provider\'s key: give the key it shows with --secret or --secret-env');
    expect(readFileSync(file, 'utf8')).toBe('{}\n');
    const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
      .publicKey.export({ type: 'spki', format: 'der' })
      .toString('base64');
    const r = await runInProcess(['sources', 'add', 'sendgrid', '--config', file, '--secret', key]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(loadConfig({ file, dataDir: join(dir, 'data') }).config.hooks.presets).toEqual([{ name: 'sendgrid', publicKey: key }]);
    expect(r.stdout).toContain('Signed Event Webhook Requests: on');
  });

  it("makes Postmark's user:password credential", async () => {
    const file = join(dir, 'postmark.json5');
    writeFileSync(file, '{}\n');
    const r = await runInProcess(['sources', 'add', 'postmark', '--config', file]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, 'secrets', 'postmark-webhook-secret'), 'utf8').trim()).toMatch(/^hook-intake:\S+$/);
  });

  it('refuses an unknown preset with a suggestion, and changes nothing', async () => {
    const file = join(dir, 'three.json5');
    writeFileSync(file, '{}\n');
    const r = await runInProcess(['sources', 'add', 'gthub', '--config', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no preset "gthub" (did you mean "github"?)');
    expect(readFileSync(file, 'utf8')).toBe('{}\n');
  });
});
