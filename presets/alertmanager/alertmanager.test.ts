/**
 * The `alertmanager` preset over real HTTP (docs/presets/alertmanager.md). Fixtures:
 * - firing.json, firing-partly-resolved.json, resolved.json: the bodies Alertmanager 0.25 (Debian's
 *   prometheus-alertmanager) sent to a receiver with `send_resolved: true`, for the alerts of the
 *   Alertmanager repository's published example, examples/ha/send_alerts.sh
 *   (https://github.com/prometheus/alertmanager/blob/main/examples/ha/send_alerts.sh): posted firing,
 *   then two of them ended, then all; it sent them with `Authorization: Bearer <credentials>`, as the
 *   headers below do;
 * - probe-failure.json: the sample notification published with the alertmanager-webhook-types crate
 *   (https://docs.rs/crate/alertmanager-webhook-types/latest/source/assets/sample-v4-payload.json).
 * Alertmanager signs nothing: the hook token is the credential.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectPresetMessage, HOOK_TOKEN, inner, type PresetService, presetService } from '../../test/helpers/presets.ts';

const DIR = join(import.meta.dirname, 'fixtures');
const FIXTURES = readdirSync(DIR).map((f) => ({ file: f, body: readFileSync(join(DIR, f), 'utf8') }));
const fixture = (name: string) => FIXTURES.find((f) => f.file === name)!.body;

/** The headers Alertmanager sends (its user agent, content type, and the receiver's authorization). */
const headers = (token = HOOK_TOKEN, extra: Record<string, string> = {}) => ({
  'content-type': 'application/json',
  'user-agent': 'Alertmanager/0.25.0',
  authorization: `Bearer ${token}`,
  ...extra,
});

let hooks: PresetService;
beforeAll(async () => {
  hooks = await presetService(['alertmanager', { name: 'alertmanager', path: 'alertmanager-firing', events: ['firing'] }]);
});
afterAll(() => hooks.close());

describe('the alertmanager preset', () => {
  it('takes every fixture, each message short and not JSON', async () => {
    for (const { file, body } of FIXTURES) {
      const answer = await hooks.send('alertmanager', body, headers());
      expect(answer.status, `${file}: ${answer.text}`).toBe(202);
      expectPresetMessage(await hooks.messageOf(answer));
    }
  });

  it('writes the group, each alert by name, where and summary, in a session per group key', async () => {
    const answer = await hooks.send('alertmanager', fixture('firing-partly-resolved.json'), headers());
    expect(answer.body.sessionKey).toBe('hook:alertmanager:alertname_DiskRunningFull');
    const content = inner(await hooks.messageOf(answer));
    expect(content.split('\n')).toEqual([
      'Firing: 4 alerts firing, 2 resolved in group alertname=DiskRunningFull (receiver hook-intake)',
      'Firing:',
      '- DiskRunningFull on example2 [dev=sda1], since 2026-11-29T03:06:48Z: please check the instance example2',
      '  The disk sda1 is running full',
      '- DiskRunningFull on example2 [dev=sdb2], since 2026-11-29T03:06:48Z: please check the instance example2',
      '  The disk sdb2 is running full',
      '- DiskRunningFull on example3 [dev=sda1] (critical), since 2026-11-29T03:06:48Z',
      '- DiskRunningFull on example3 [dev=sda1] (warning), since 2026-11-29T03:06:48Z',
      'Resolved:',
      '- DiskRunningFull on example1 [dev=sda1], ended 2026-11-29T03:06:54Z: please check the instance example1',
      '- DiskRunningFull on example1 [dev=sda2], ended 2026-11-29T03:06:54Z: please check the instance example1',
      'http://alertmanager.example.org:9093',
    ]);
  });

  it('says the summary, description and the rule that fired', async () => {
    const answer = await hooks.send('alertmanager', fixture('probe-failure.json'), headers());
    expect(answer.body.sessionKey).toBe('hook:alertmanager:severity_critical:alertname_ProbeFailure');
    expect(inner(await hooks.messageOf(answer))).toBe(
      [
        'Firing: 1 alert firing in group alertname=ProbeFailure (receiver sms)',
        'Firing:',
        '- ProbeFailure on https://server.example.org [job=http_checks, monitor=master] (critical), since 2023-02-06T13:08:45Z: BlackBox Probe Failure: https://server.example.org',
        '  Instance https://server.example.org has been down for over 5m. Job: http_checks',
        '  Source: http://prometheus.example.org:9090/graph?g0.expr=probe_success+%3D%3D+0&g0.tab=1',
        'http://prometheus.example.org:9093',
      ].join('\n'),
    );
  });

  it('refuses a wrong or missing token with 401; a body that is no notification is summarized', async () => {
    const body = fixture('firing.json');
    expect((await hooks.send('alertmanager', body, headers('wrong-token-0123456789abcdef0123'))).status).toBe(401);
    const { authorization: _, ...none } = headers();
    expect((await hooks.send('alertmanager', body, none)).status).toBe(401);
    const odd = await hooks.send('alertmanager', JSON.stringify({ status: 'firing', note: 'hello' }), headers());
    expect(odd.status).toBe(202);
    expect(inner(await hooks.messageOf(odd))).toBe('Alertmanager sent a body that is not a notification\nstatus: firing\nnote: hello');
  });

  it('answers a repeat of an Idempotency-Key as a duplicate (Alertmanager sends no delivery id)', async () => {
    const body = fixture('resolved.json');
    const first = await hooks.send('alertmanager', body, headers(HOOK_TOKEN, { 'idempotency-key': 'am-retry-1' }));
    const again = await hooks.send('alertmanager', body, headers(HOOK_TOKEN, { 'idempotency-key': 'am-retry-1' }));
    expect(first.status).toBe(202);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
  });

  it('with events: [firing], answers 204 to a resolved group and keeps it with the reason', async () => {
    const answer = await hooks.send('alertmanager-firing', fixture('resolved.json'), headers());
    expect(answer.status).toBe(204);
    const kept = (await hooks.requests()).find((r) => r.hook === 'alertmanager-firing');
    expect(kept).toMatchObject({ status: 204, mappingId: 'alertmanager-firing' });
    expect((await hooks.send('alertmanager-firing', fixture('firing.json'), headers())).status).toBe(202);
  });
});
