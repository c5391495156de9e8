/**
 * The `sentry` preset over real HTTP (docs/presets/sentry.md), with the payloads Sentry publishes in
 * "Integration Platform › Webhooks" (https://docs.sentry.io/organization/integrations/integration-platform/webhooks/):
 * issues, issue alerts, metric alerts, errors, comments and installation, one fixture each, named
 * `<Sentry-Hook-Resource>.<action>.json`. Sentry has no library that signs or checks its webhooks: they
 * are signed as its docs describe, the hex HMAC-SHA256 of the body under the integration's client
 * secret in `Sentry-Hook-Signature`, with the headers Sentry sends.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const SECRET = 'sentry-client-secret-0123456789abcdef';
const DIR = join(import.meta.dirname, 'fixtures');
const FILES = readdirSync(DIR);
const fixture = (name: string) => readFileSync(join(DIR, name), 'utf8');
const resourceOf = (file: string) => file.split('.')[0]!;

const headers = (resource: string, body: string, requestId = randomUUID().replace(/-/g, ''), secret = SECRET) => ({
  'content-type': 'application/json',
  'request-id': requestId,
  'sentry-hook-resource': resource,
  'sentry-hook-timestamp': String(Math.floor(Date.now() / 1000)),
  'sentry-hook-signature': createHmac('sha256', secret).update(body).digest('hex'),
});

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([
    { name: 'sentry', secret: SECRET },
    { name: 'sentry', path: 'sentry-alerts', secret: SECRET, events: ['event_alert.triggered', 'metric_alert.critical'] },
  ]);
});
afterAll(() => hooks.close());

describe('the sentry preset', () => {
  it(`takes every published example (${FILES.length}), each message short and not JSON`, async () => {
    for (const file of FILES) {
      const body = fixture(file);
      const answer = await hooks.send('sentry', body, headers(resourceOf(file), body));
      expect(answer.status, `${file}: ${answer.text}`).toBe(202);
      expectPresetMessage(await hooks.messageOf(answer));
    }
  });

  it('writes an issue alert with the event that fired it, in the session of its issue', async () => {
    const body = fixture('event_alert.triggered.json');
    const answer = await hooks.send('sentry', body, headers('event_alert', body));
    expect(answer.body.sessionKey).toBe('hook:sentry:issue:1117540176');
    expect(inner(await hooks.messageOf(answer))).toBe(
      [
        'Sentry alert "Very Important Alert Rule!" triggered in test-org/front-end (error): ReferenceError: heck is not defined',
        'In ?(<anonymous>)',
        'URL: https://null.jsbin.com/runner',
        'https://sentry.io/organizations/test-org/issues/1117540176/events/e4874d664c3540c1a32eab185f12c5ab/',
      ].join('\n'),
    );
  });

  it('writes an issue (its error events join its session) and a metric alert in a session of its own', async () => {
    const issue = fixture('issue.created.json');
    const created = await hooks.send('sentry', issue, headers('issue', issue));
    expect(created.body.sessionKey).toBe('hook:sentry:issue:1170820242');
    expect(inner(await hooks.messageOf(created)).split('\n')[0]).toBe(
      'Sentry issue FRONT-END-9 created in front-end (error, escalating): ReferenceError: blooopy is not defined',
    );
    const error = fixture('error.created.json');
    const event = await hooks.send('sentry', error, headers('error', error));
    expect(event.body.sessionKey).toBe(created.body.sessionKey);
    const metric = fixture('metric_alert.resolved.json');
    const resolved = await hooks.send('sentry', metric, headers('metric_alert', metric));
    expect(resolved.body.sessionKey).toBe('hook:sentry:incident:4');
    expect(inner(await hooks.messageOf(resolved))).toBe(
      [
        'Sentry metric alert "Too many errors" resolved in bar: Resolved: Too many errors',
        '1000 events in the last 10 minutes',
        'Filter: level:error',
        'Query: count() where level:error',
        'https://sentry.io/organizations/baz/alerts/1/',
      ].join('\n'),
    );
  });

  it('refuses a wrong or missing signature with 401, and answers a repeat of a Request-ID as a duplicate', async () => {
    const body = fixture('comment.created.json');
    expect((await hooks.send('sentry', body, headers('comment', body, undefined, 'wrong-secret'))).status).toBe(401);
    const { 'sentry-hook-signature': _, ...unsigned } = headers('comment', body);
    expect((await hooks.send('sentry', body, unsigned)).status).toBe(401);
    const id = randomUUID().replace(/-/g, '');
    const first = await hooks.send('sentry', body, headers('comment', body, id));
    const again = await hooks.send('sentry', body, headers('comment', body, id));
    expect(first.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
  });

  it('with events: [event_alert.triggered, metric_alert.critical], answers 204 to a resolved metric alert and keeps it', async () => {
    const body = fixture('metric_alert.resolved.json');
    const answer = await hooks.send('sentry-alerts', body, headers('metric_alert', body));
    expect(answer.status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'sentry-alerts');
    expect(kept).toMatchObject({ status: 204, mappingId: 'sentry-alerts' });
  });

  it('summarizes a resource it has no message for, never refusing it', async () => {
    const body = JSON.stringify({ action: 'root_cause_completed', data: { run_id: 42, group_id: 7 } });
    const answer = await hooks.send('sentry', body, headers('seer', body));
    expect(answer.status).toBe(202);
    expect(inner(await hooks.messageOf(answer))).toBe('Sentry webhook "seer" (root_cause_completed)\nrun_id: 42\ngroup_id: 7');
  });
});
