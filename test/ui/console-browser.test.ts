/**
 * The console in a real headless Chromium (playwright-core driving Debian's
 * `chromium`), against the real CLI: sign-in and a wrong token, the overview
 * and its live update, runs and a run's detail with redeliver, the request log
 * with replay, the transform tester with a transform's error, a phone-sized
 * screen, CSRF, sign-out; and the gateway token in no server output and no
 * page. With UI_SCREENSHOTS=1 it saves each page to docs/console/*.png.
 *
 * Without /usr/bin/chromium the file is skipped, or fails when CI is set.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { cleanup, post, ROOT, startCli, tempDir, until, type Running } from '../helpers/cli.ts';
import { tokenFingerprint } from '../../src/auth/token.ts';

const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const SHOTS = process.env.UI_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'console') : undefined;

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const GW = `gw_${randomBytes(18).toString('hex')}`;

it.runIf(!HAVE_CHROMIUM && process.env.CI)('has chromium in CI', () => {
  expect.fail(`${CHROMIUM} is missing; .ci/run installs it (apt-get install chromium)`);
});

describe.skipIf(!HAVE_CHROMIUM)('the console in Chromium', () => {
  let srv: Running;
  let dir: string;
  /** The channel's receiver: refuses the first reply (400, so the delivery fails at once), takes the next. */
  let receiver: Server;
  let received = 0;
  let context: BrowserContext;
  let page: Page;
  const pages: string[] = [];
  /** Script errors and console errors (a refused style or script under the page's CSP is one); failed loads are expected (401, 403). */
  const browserErrors: string[] = [];
  let agentRunId = '';
  /** The session cookie's value: a credential too. */
  let sessionId = '';

  const shot = async (name: string) => {
    pages.push(await page.content());
    if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  };
  const hook = (name: string, body: unknown, headers: Record<string, string> = {}) =>
    post(`${srv.url}/hooks/${name}`, body, { authorization: `Bearer ${HOOK}`, ...headers });

  beforeAll(async () => {
    dir = tempDir('hook-intake-ui-');
    mkdirSync(join(dir, 'transforms'));
    writeFileSync(
      join(dir, 'transforms', 'pulls.ts'),
      `export default (ctx: { payload: { number: number; title: string } }) => ({ message: 'PR #' + ctx.payload.number + ': ' + ctx.payload.title });`,
    );
    writeFileSync(
      join(dir, 'transforms', 'boom.ts'),
      `export default (ctx: { payload: { n: number } }) => {\n  if (ctx.payload.n > 1) throw new RangeError('n is too large: ' + ctx.payload.n);\n  return { text: 'ok' };\n};\n`,
    );
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        // a callback's events (docs/callbacks.md) go to /events and are taken
        if (req.url === '/events') return void res.writeHead(204).end();
        res.writeHead(received++ === 0 ? 400 : 200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const channels = { out: { type: 'webhook', url: `${receiverUrl}/replies` } };
    const callbacks = [
      {
        id: 'ci',
        url: `${receiverUrl}/events`,
        secret: `whsec_${randomBytes(32).toString('base64')}`,
        types: ['run.completed', 'delivery.failed'],
        hooks: ['agent'],
        allowPrivateNetwork: true,
      },
    ];
    const mappings = [
      {
        id: 'github',
        match: { path: 'github' },
        name: 'GitHub',
        sessionKey: 'hook:gh:{{repository}}',
        deliver: false,
        wakeMode: 'next-heartbeat',
        transform: { module: 'pulls.ts' },
      },
      { id: 'boom', match: { path: 'boom' }, action: 'wake', transform: { module: 'boom.ts' } },
    ];
    srv = await startCli({
      dir,
      config: {
        gateway: { auth: { token: GW } },
        hooks: { enabled: true, token: HOOK, mappings },
        channels,
        callbacks,
        agents: { defaults: { heartbeat: { every: '0' } } },
      },
    });
    // some traffic: answers of several statuses, an agent run whose reply the channel refuses (failed), a mapped run
    expect((await hook('wake', { text: 'deploy finished', mode: 'next-heartbeat' })).status).toBe(200);
    expect((await post(`${srv.url}/hooks/wake`, { text: 'x' }, { authorization: 'Bearer wrong' })).status).toBe(401);
    const agent = await hook('agent', {
      message: 'Summarise the deploy',
      name: 'Deploys',
      sessionKey: 'hook:deploys',
      wakeMode: 'next-heartbeat',
      channel: 'out',
    });
    expect(agent.status).toBe(202);
    agentRunId = agent.body.runId;
    expect((await hook('github', { number: 7, title: 'Fix the console', repository: 'acme/app' })).status).toBe(202);
    expect((await hook('boom', { n: 5 })).status).toBe(500);
    await until(async () => {
      const r = await fetch(`${srv.url}/api/runs/${agentRunId}`, { headers: { authorization: `Bearer ${GW}` } });
      return ((await r.json()) as { run: { delivery: { status: string } } }).run.delivery.status === 'failed';
    });

    const profile = join(dir, 'chromium-profile');
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      viewport: { width: 1280, height: 860 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(5000);
    page.on('pageerror', (e) => browserErrors.push(String(e)));
    page.on('console', (m) => {
      if (m.type() === 'error' && !/^Failed to load resource/.test(m.text())) browserErrors.push(m.text());
    });
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
  });

  afterAll(async () => {
    await context?.close();
    await srv?.stop();
    receiver?.close();
    if (dir) cleanup(dir);
  });

  it('refuses a wrong token, and signs in with the gateway token for an HttpOnly, SameSite=Strict cookie', async () => {
    await page.goto(`${srv.url}/ui`);
    await page.fill('#token', 'not-the-token');
    await page.click('#sign-in button[type=submit]');
    await expect.poll(() => page.textContent('#sign-in-message')).toContain('That token is not the gateway token.');
    await shot('sign-in');

    await page.fill('#token', GW);
    await page.click('#sign-in button[type=submit]');
    await page.waitForSelector('#overview .figures');
    const cookies = await context.cookies();
    expect(cookies).toEqual([
      expect.objectContaining({ name: 'hook_intake_session', httpOnly: true, sameSite: 'Strict', path: '/', secure: false }),
    ]);
    expect(cookies[0]!.value).not.toContain(GW);
    sessionId = cookies[0]!.value;
  });

  it('shows the overview: answers per minute by status, queue, runs in flight, generation, last reload', async () => {
    await page.waitForSelector('#overview .statuses');
    const text = (await page.textContent('#overview'))!;
    expect(text).toContain('Queue depth');
    expect(text).toContain('Runs in flight');
    expect(text).toMatch(/Generation#\d+/);
    expect(text).toContain('No reload has failed.');
    const statuses = await page.$$eval('#overview .statuses li', (els) => els.map((e) => e.textContent?.trim()));
    expect(statuses).toEqual(['200 1', '202 2', '401 1', '500 1']);
    await shot('overview');
  });

  it('updates the overview live, by server-sent events', async () => {
    expect((await hook('wake', { text: 'one more', mode: 'next-heartbeat' })).status).toBe(200);
    await expect
      .poll(() => page.$$eval('#overview .statuses li', (els) => els.map((e) => e.textContent?.trim())), { timeout: 5000 })
      .toContain('200 2');
  });

  it('shows a failed reload on the overview, live, and its end once the file is fixed', async () => {
    const good = readFileSync(srv.configFile, 'utf8');
    const broken = JSON.parse(good);
    broken.hooks.mapings = broken.hooks.mappings; // a typo: the reload fails, the running configuration stays
    writeFileSync(srv.configFile, JSON.stringify(broken));
    await page.waitForSelector('#reload.alarm', { timeout: 10_000 });
    const text = (await page.textContent('#reload'))!;
    expect(text).toMatch(/The reload at .* failed; generation #1 keeps serving\./);
    expect(text).toContain('hooks.mapings');
    await shot('overview-reload-error');
    writeFileSync(srv.configFile, good);
    await page.waitForSelector('#reload:not(.alarm)', { timeout: 10_000 });
    expect(await page.textContent('#overview')).toMatch(/Generation#2/);
  });

  it('lists runs with filters, and shows a run: timeline, delivery, callbacks, transcript', async () => {
    await page.click('nav a[data-page=runs]');
    await page.waitForSelector('#runs table.runs');
    expect(await page.$$eval('#runs tbody tr', (rows) => rows.length)).toBe(2);
    await page.fill('#filter-session', 'hook:gh:');
    await expect
      .poll(() => page.$$eval('#runs tbody tr', (rows) => rows.map((r) => r.textContent)))
      .toEqual([expect.stringContaining('GitHub')]);
    await page.fill('#filter-session', '');
    await page.selectOption('#filter-status', 'ok');
    await expect.poll(() => page.$$eval('#runs tbody tr', (rows) => rows.length)).toBe(2);
    await page.fill('#filter-hook', 'deploys');
    await expect.poll(() => page.$$eval('#runs tbody tr', (rows) => rows.length)).toBe(1);
    // the echo provider's usage, as the API gives it
    const answer = await fetch(`${srv.url}/api/runs/${agentRunId}`, { headers: { authorization: `Bearer ${GW}` } });
    const { run } = (await answer.json()) as { run: { usage: { inputTokens: number; outputTokens: number } } };
    const usage = `${run.usage.inputTokens} in · ${run.usage.outputTokens} out`;
    expect(await page.textContent('#runs tbody tr')).toContain(usage);
    await shot('runs');

    await page.click(`#runs a[href="#/runs/${agentRunId}"]`);
    await page.waitForSelector('#run .timeline');
    expect(await page.textContent('#run-tokens')).toBe(usage);
    const text = (await page.textContent('#run'))!;
    expect(text).toContain('accepted');
    expect(text).toContain('finished');
    expect(text).toContain('failed');
    await page.waitForSelector('#transcript .message');
    expect(await page.$$eval('#transcript .message.this-run', (els) => els.length)).toBe(2);
    // its events for the callback, each sent (the page looks again while one is pending)
    await expect
      .poll(() => page.$$eval('#callbacks tbody tr', (rows) => rows.map((r) => r.textContent)))
      .toEqual([expect.stringMatching(/^cirun\.completedsent1/), expect.stringMatching(/^cidelivery\.failedsent1/)]);
    expect(await page.isEnabled('#redeliver')).toBe(true);
    await shot('run');
  });

  it('redelivers a failed reply from the run page, and the page shows it sent', async () => {
    await page.click('#redeliver');
    await page.waitForSelector('#action-result :is(.good, .problem)');
    const result = (await page.textContent('#action-result'))!;
    expect(result).toContain('Redeliver: done.');
    // the live update redraws the run once the outbox has sent it
    await page.waitForSelector('#run .timeline .badge.good:text("sent")');
    expect(received).toBe(2);
    // logged with who: the fingerprint of the token the console signed in with, the address, and that it came through the console
    const line = srv
      .output()
      .split('\n')
      .find((l) => l.includes('"admin":"redeliver"'));
    expect(JSON.parse(line!)).toMatchObject({
      by: { fingerprint: tokenFingerprint(GW), address: '127.0.0.1', via: 'console' },
      runId: agentRunId,
    });
  });

  it('retries a run from its page: a new run with the same input', async () => {
    // the redelivery's answer above may still be shown: wait for an answer other than it
    const before = await page.textContent('#action-result');
    await page.click('#retry');
    // polled from here: the page's policy allows no script to be evaluated from a string
    const answered = async () =>
      (await page.$('#action-result :is(.good, .problem)')) !== null && (await page.textContent('#action-result')) !== before;
    await expect.poll(answered, { timeout: 20_000 }).toBe(true);
    expect(await page.textContent('#action-result')).toContain('Retry: done. New run');
    await page.click('#action-result a');
    await page.waitForSelector('#run .timeline');
    const newId = decodeURIComponent(new URL(page.url()).hash.slice('#/runs/'.length));
    expect(newId).not.toBe(agentRunId);
    expect(await page.textContent('#run')).toContain('Deploys');
  });

  it('shows the request log, a request with its payload, and replays it', async () => {
    await page.click('nav a[data-page=requests]');
    await page.waitForSelector('#requests-list :is(table, p:not(.loading))');
    // the accepted ones (two wakes, the agent request, the mapped one) and the refused ones (a 401 and a 500), with their code
    expect(await page.$$eval('#requests tbody tr', (rows) => rows.length)).toBe(6);
    expect(await page.textContent('#requests tbody')).toContain('401 UNAUTHORIZED');
    await page.fill('#filter-hook', 'github');
    await expect
      .poll(() => page.$$eval('#requests tbody tr', (rows) => rows.map((r) => r.textContent)))
      .toEqual([expect.stringContaining('github')]);
    await shot('requests');
    await page.fill('#filter-hook', '');
    await expect.poll(() => page.$$eval('#requests tbody tr', (rows) => rows.length)).toBe(6);

    // the oldest: the first wake, its payload and headers (no credentials), then replayed
    await page.click('#requests tbody tr:last-child a');
    await page.waitForSelector('#payload');
    expect(await page.textContent('#payload')).toContain('"text": "deploy finished"');
    const headers = await page.$$eval('#request table.headers td:first-child', (cells) => cells.map((c) => c.textContent));
    expect(headers).toContain('content-type');
    expect(headers).not.toContain('authorization');
    expect(await page.textContent('#request')).not.toContain(HOOK);
    const id = decodeURIComponent(new URL(page.url()).hash.slice('#/requests/'.length));
    await page.click('#replay');
    await page.waitForSelector('#replay-result :is(.good, .problem)');
    expect(await page.textContent('#replay-result')).toContain('Replayed through the current configuration. Kept as');
    expect(await page.textContent('#replay-result')).toContain(`"replayOf": "${id}"`);
    await shot('request');
  });

  it("tries a mapping in the tester: the actions, and a transform's error", async () => {
    await page.click('nav a[data-page=tester]');
    await page.waitForSelector('#try-mapping option[value=github]', { state: 'attached' });
    await page.selectOption('#try-mapping', 'github');
    expect(await page.inputValue('#try-hook')).toBe('github');
    await page.fill('#try-headers', 'x-github-event: pull_request');
    await page.fill('#try-body', '{"number": 9, "title": "Add the tester", "repository": "acme/app"}');
    await page.click('#try-run');
    await page.waitForSelector('#try-output');
    const ok = (await page.textContent('#try-output'))!;
    expect(ok).toContain('match    github');
    expect(ok).toContain('PR #9: Add the tester');
    expect(ok).toContain('sessionKey: hook:gh:acme/app');

    await page.selectOption('#try-mapping', 'boom');
    await page.fill('#try-body', '{"n": 3}');
    await page.click('#try-run');
    await page.waitForSelector('#transform-error');
    expect(await page.textContent('#transform-error')).toContain('RangeError: n is too large: 3');
    expect(await page.textContent('#try-output')).toContain('would answer 500 TRANSFORM_FAILED');
    await shot('tester');
    // nothing was dispatched: still the same runs
    const runs = await fetch(`${srv.url}/api/runs`, { headers: { authorization: `Bearer ${GW}` } });
    expect(((await runs.json()) as { runs: unknown[] }).runs).toHaveLength(3); // the two, and the retry
  });

  it('refuses a state-changing call from the page without the CSRF token', async () => {
    const status = await page.evaluate(
      async () =>
        (await fetch('/api/try', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"hook":"wake"}' })).status,
    );
    expect(status).toBe(403);
  });

  it('fits a phone-sized screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [hash, ready, name] of [
      ['#/overview', '#overview .figures', 'phone-overview'],
      ['#/runs', '#runs table.runs', 'phone-runs'],
      [`#/runs/${agentRunId}`, '#run .timeline', 'phone-run'],
    ] as const) {
      await page.goto(`${srv.url}/ui${hash}`);
      await page.waitForSelector(ready);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      await shot(name);
    }
  });

  it('signs out: back to sign-in, and the cookie no longer opens the API', async () => {
    await page.click('#sign-out');
    await page.waitForSelector('#sign-in');
    const status = await page.evaluate(async () => (await fetch('/api/stats')).status);
    expect(status).toBe(401);
  });

  it('runs without a script error or a CSP refusal', () => {
    expect(browserErrors).toEqual([]);
  });

  it('never shows the gateway or hook token in server output or a page, nor the session id in output', () => {
    expect(pages.length).toBeGreaterThanOrEqual(6);
    for (const html of [...pages, srv.output()]) {
      expect(html).not.toContain(GW);
      expect(html).not.toContain(HOOK);
    }
    expect(sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(srv.output()).not.toContain(sessionId);
  });
});
