/**
 * The `pagerduty` preset over real HTTP (docs/presets/pagerduty.md). Fixtures, from PagerDuty's v3
 * webhook overview (https://developer.pagerduty.com/docs/webhooks-overview):
 * - incident.priority_updated.json, service.updated.json: the two example payloads it publishes whole;
 * - `*.data-from-docs.json`: not published whole — the envelope of the incident.priority_updated example
 *   around the `data` object that page documents for that event type (incident, incident_note,
 *   incident_status_update, incident_responder), with its `event_type` and an `event.id` of its own.
 * PagerDuty has no library that signs or checks its webhooks: they are signed as "Verifying Signatures"
 * describes, `v1=` and the hex HMAC-SHA256 of the body under the subscription's secret.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPresetMessage, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const SECRET = 'pagerduty-signing-secret-0123456789';
const DIR = join(import.meta.dirname, 'fixtures');
const FILES = readdirSync(DIR);
const fixture = (name: string) => readFileSync(join(DIR, name), 'utf8');

const sign = (body: string, ...secrets: string[]) =>
  secrets.map((s) => `v1=${createHmac('sha256', s).update(body).digest('hex')}`).join(',');
const headers = (body: string, signature = sign(body, SECRET)) => ({
  'content-type': 'application/json',
  'user-agent': 'PagerDuty-Webhook/V3.0',
  'x-webhook-id': randomUUID(),
  'x-webhook-subscription': 'PY1OQ3T',
  'x-pagerduty-signature': signature,
});

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService([
    { name: 'pagerduty', secret: SECRET },
    { name: 'pagerduty', path: 'pagerduty-triggered', secret: SECRET, events: ['incident.triggered'] },
  ]);
});
afterAll(() => hooks.close());

describe('the pagerduty preset', () => {
  it('takes every fixture, each message short and not JSON', async () => {
    for (const file of FILES) {
      const body = fixture(file);
      const answer = await hooks.send('pagerduty', body, headers(body));
      expect(answer.status, `${file}: ${answer.text}`).toBe(202);
      expectPresetMessage(await hooks.messageOf(answer));
    }
  });

  it('writes the incident, its service, urgency, priority and assignees, in a session per incident', async () => {
    const body = fixture('incident.priority_updated.json');
    const answer = await hooks.send('pagerduty', body, headers(body));
    expect(answer.body.sessionKey).toBe('hook:pagerduty:incident:PGR0VU2');
    expect(inner(await hooks.messageOf(answer))).toBe(
      [
        'PagerDuty incident #2 priority changed, by Tenex Engineer: A little bump in the road',
        'Service API Service: status triggered, urgency high, priority P1',
        'Assigned to User 123 (team Engineering)',
        'Conference: https://example.com',
        'https://acme.pagerduty.com/incidents/PGR0VU2',
      ].join('\n'),
    );
    const note = fixture('incident.annotated.data-from-docs.json');
    const noted = await hooks.send('pagerduty', note, headers(note));
    expect(noted.body.sessionKey).toBe(answer.body.sessionKey);
  });

  it('takes a signature by either secret during a rotation, refuses a wrong or missing one with 401', async () => {
    const body = fixture('service.updated.json');
    expect((await hooks.send('pagerduty', body, headers(body, sign(body, 'old-secret', SECRET)))).status).toBe(202);
    expect((await hooks.send('pagerduty', body, headers(body, sign(body, 'wrong-secret')))).status).toBe(401);
    const { 'x-pagerduty-signature': _, ...unsigned } = headers(body);
    expect((await hooks.send('pagerduty', body, unsigned)).status).toBe(401);
  });

  it('answers a redelivery of an event (same event.id) as a duplicate', async () => {
    const body = JSON.stringify({ event: { ...JSON.parse(fixture('incident.triggered.data-from-docs.json')).event, id: randomUUID() } });
    const first = await hooks.send('pagerduty', body, headers(body));
    const again = await hooks.send('pagerduty', body, headers(body));
    expect(first.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
  });

  it('with events: [incident.triggered], answers 204 to a note and keeps it with the reason', async () => {
    const body = fixture('incident.annotated.data-from-docs.json');
    const answer = await hooks.send('pagerduty-triggered', body, headers(body));
    expect(answer.status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'pagerduty-triggered');
    expect(kept).toMatchObject({ status: 204, mappingId: 'pagerduty-triggered' });
  });

  it("answers PagerDuty's test event (pagey.ping) 204, running nothing", async () => {
    const body = JSON.stringify({
      event: {
        id: randomUUID(),
        event_type: 'pagey.ping',
        resource_type: 'pagey',
        occurred_at: '2021-12-08T22:46:16.934Z',
        agent: null,
        client: null,
        data: { message: 'Hello from your friend Pagey!', type: 'ping' },
      },
    });
    const answer = await hooks.send('pagerduty', body, headers(body));
    expect(answer.status).toBe(204);
  });
});
