/**
 * The `healthchecks` preset over real HTTP (docs/presets/healthchecks.md). Healthchecks.io sends the
 * body the operator writes in the Webhook integration, with its placeholders filled in. Fixtures:
 * - check.json: the check Healthchecks publishes as the "Get a Single Check" example response
 *   (https://healthchecks.io/docs/api/#get-check), which `$JSON` renders; as a body of `$JSON` alone;
 * - down.from-template.json, up.from-template.json: not published as such — the body the documented
 *   template `{"status": "$STATUS", "now": "$NOW", "check": $JSON}` makes for that check (the form's
 *   own example is `{"now": "$NOW", "check": $JSON}`, https://healthchecks.io/integrations/add_webhook/),
 *   with times chosen, and for "up" the check's status, pings and times as a ping would leave them.
 * Healthchecks signs nothing: the hook token travels in the Authorization header the integration sets.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPresetMessage, HOOK_TOKEN, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const DIR = join(import.meta.dirname, 'fixtures');
const fixture = (name: string) => readFileSync(join(DIR, name), 'utf8');
const FIXTURES = ['check.json', 'down.from-template.json', 'up.from-template.json'];

/** What Healthchecks sends: its user agent, and the headers the integration's "Request Headers" set. */
const headers = (token = HOOK_TOKEN, extra: Record<string, string> = {}) => ({
  'content-type': 'application/json',
  'user-agent': 'healthchecks.io',
  authorization: `Bearer ${token}`,
  ...extra,
});

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService(['healthchecks', { name: 'healthchecks', path: 'healthchecks-down', events: ['down'] }]);
});
afterAll(() => hooks.close());

describe('the healthchecks preset', () => {
  it('takes every fixture, each message short and not JSON', async () => {
    for (const file of FIXTURES) {
      const answer = await hooks.send('healthchecks', fixture(file), headers());
      expect(answer.status, `${file}: ${answer.text}`).toBe(202);
      expectPresetMessage(await hooks.messageOf(answer));
    }
  });

  it('writes the check, its state, last ping, schedule and page, in a session per check', async () => {
    const down = await hooks.send('healthchecks', fixture('down.from-template.json'), headers());
    expect(down.body.sessionKey).toBe('hook:healthchecks:803f680d-e89b-492b-82ef-2be7b774a92d');
    expect(inner(await hooks.messageOf(down))).toBe(
      [
        'Check "Database Backup" is down (tags: production db) at 2020-03-24T05:35:00+00:00',
        'Runs ~/db-backup.sh',
        'Last ping 2020-03-23T10:19:32+00:00, 7 pings in all',
        'schedule 15 5 * * * (UTC), grace 20 min',
        'https://healthchecks.io/checks/803f680d-e89b-492b-82ef-2be7b774a92d/details/',
      ].join('\n'),
    );
    const up = await hooks.send('healthchecks', fixture('up.from-template.json'), headers());
    expect(up.body.sessionKey).toBe(down.body.sessionKey);
    expect(inner(await hooks.messageOf(up)).split('\n')[0]).toBe(
      'Check "Database Backup" is up again (tags: production db) at 2020-03-24T05:41:07+00:00',
    );
  });

  it('takes the token as ?token= too; refuses a wrong or missing one with 401', async () => {
    const body = fixture('down.from-template.json');
    const { authorization: _, ...none } = headers();
    expect((await hooks.send(`healthchecks?token=${HOOK_TOKEN}`, body, none)).status).toBe(202);
    expect((await hooks.send('healthchecks', body, none)).status).toBe(401);
    expect((await hooks.send('healthchecks', body, headers('wrong-token-0123456789abcdef0123'))).status).toBe(401);
  });

  it('summarizes a body without a check, never refusing it', async () => {
    const answer = await hooks.send('healthchecks', JSON.stringify({ status: 'down', code: 42 }), headers());
    expect(answer.status).toBe(202);
    expect(inner(await hooks.messageOf(answer))).toBe('Healthchecks: a check is down\nstatus: down\ncode: 42');
  });

  it('answers a repeat of the Idempotency-Key the integration sets ($CODE $STATUS $NOW) as a duplicate', async () => {
    const body = fixture('down.from-template.json');
    const key = { 'idempotency-key': '803f680d-e89b-492b-82ef-2be7b774a92d down 2020-03-24T05:35:00+00:00' };
    const first = await hooks.send('healthchecks', body, headers(HOOK_TOKEN, key));
    const again = await hooks.send('healthchecks', body, headers(HOOK_TOKEN, key));
    expect(first.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
  });

  it('with events: [down], answers 204 to a check coming up and keeps it with the reason', async () => {
    const answer = await hooks.send('healthchecks-down', fixture('up.from-template.json'), headers());
    expect(answer.status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'healthchecks-down');
    expect(kept).toMatchObject({ status: 204, mappingId: 'healthchecks-down' });
    expect((await hooks.send('healthchecks-down', fixture('down.from-template.json'), headers())).status).toBe(202);
  });
});
