/**
 * The `grafana` preset over real HTTP (docs/presets/grafana.md). Fixtures:
 * - firing.json: the webhook JSON payload Grafana publishes in "Configure the webhook notifier for
 *   Alerting" (https://grafana.com/docs/grafana/latest/alerting/configure-notifications/manage-contact-points/integrations/webhook-notifier/);
 * - resolved.derived-from-docs.json: not published — that example with its status, alerts' statuses,
 *   title and state set as Grafana sends them once the alerts resolve, and an `endsAt` each.
 * Grafana signs nothing here: the contact point sends the hook token as `Authorization: Bearer`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPresetMessage, HOOK_TOKEN, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const DIR = join(import.meta.dirname, 'fixtures');
const FIXTURES = readdirSync(DIR).map((f) => ({ file: f, body: readFileSync(join(DIR, f), 'utf8') }));
const fixture = (name: string) => FIXTURES.find((f) => f.file === name)!.body;

const headers = (token = HOOK_TOKEN, extra: Record<string, string> = {}) => ({
  'content-type': 'application/json',
  'user-agent': 'Grafana',
  authorization: `Bearer ${token}`,
  ...extra,
});

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService(['grafana', { name: 'grafana', path: 'grafana-firing', events: ['firing'], action: 'wake' }]);
});
afterAll(() => hooks.close());

describe('the grafana preset', () => {
  it('takes every fixture, each message short and not JSON', async () => {
    for (const { file, body } of FIXTURES) {
      const answer = await hooks.send('grafana', body, headers());
      expect(answer.status, `${file}: ${answer.text}`).toBe(202);
      expectPresetMessage(await hooks.messageOf(answer));
    }
  });

  it('writes each alert with its values and links, in a session per group (the receiver when the key is empty)', async () => {
    const answer = await hooks.send('grafana', fixture('firing.json'), headers());
    expect(answer.body.sessionKey).toBe('hook:grafana:My_Super_Webhook');
    expect(inner(await hooks.messageOf(answer))).toBe(
      [
        'Firing: 2 alerts firing in group team=blue (receiver My Super Webhook)',
        'Firing:',
        '- High memory usage [zone=us-1], since 2021-10-12T09:51:03+02:00: This alert was triggered for zone us-1',
        '  The system has high memory usage',
        '  Runbook: https://myrunbook.com/runbook/1234',
        '  Source: https://play.grafana.org/alerting/1afz29v7z/edit',
        '  Values: B=44.2394, C=1',
        '  Silence: https://play.grafana.org/alerting/silence/new?alertmanager=grafana&matchers=alertname%3DT2%2Cteam%3Dblue%2Czone%3Dus-1',
        '- High CPU usage [zone=eu-1], since 2021-10-12T09:56:03+02:00: This alert was triggered for zone eu-1',
        '  The system has high CPU usage',
        '  Runbook: https://myrunbook.com/runbook/1234',
        '  Source: https://play.grafana.org/alerting/d1rdpdv7k/edit',
        '  Values: B=44.2394, C=1',
        '  Silence: https://play.grafana.org/alerting/silence/new?alertmanager=grafana&matchers=alertname%3DT1%2Cteam%3Dblue%2Czone%3Deu-1',
        'https://play.grafana.org/',
      ].join('\n'),
    );
  });

  it('refuses a wrong or missing token with 401', async () => {
    const body = fixture('firing.json');
    expect((await hooks.send('grafana', body, headers('wrong-token-0123456789abcdef0123'))).status).toBe(401);
    const { authorization: _, ...none } = headers();
    expect((await hooks.send('grafana', body, none)).status).toBe(401);
  });

  it('answers a repeat of an Idempotency-Key as a duplicate (Grafana sends no delivery id)', async () => {
    const body = fixture('firing.json');
    const first = await hooks.send('grafana', body, headers(HOOK_TOKEN, { 'idempotency-key': 'grafana-retry-1' }));
    const again = await hooks.send('grafana', body, headers(HOOK_TOKEN, { 'idempotency-key': 'grafana-retry-1' }));
    expect(first.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
  });

  it('with events: [firing] and action: wake, answers 204 to a resolved group and wakes for a firing one', async () => {
    const skipped = await hooks.send('grafana-firing', fixture('resolved.derived-from-docs.json'), headers());
    expect(skipped.status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'grafana-firing');
    expect(kept).toMatchObject({ status: 204, mappingId: 'grafana-firing' });
    const woke = await hooks.send('grafana-firing', fixture('firing.json'), headers());
    expect(woke.status).toBe(200);
    expect(woke.body.eventId).toBeDefined();
    expect(inner(await hooks.messageOf(woke))).toMatch(/^Firing: 2 alerts firing/);
  });
});
