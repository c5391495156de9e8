/**
 * The Alertmanager example: a group of alerts fans out into one action per
 * firing alert, plus one wake for the next heartbeat listing resolved ones.
 */
import { describe, expect, it } from 'vitest';
import alertmanager, { type AlertmanagerNotification } from './alertmanager.ts';
import { context, fixture } from '../test/helpers/transform-context.ts';

const run = (payload: AlertmanagerNotification) => alertmanager(context(payload, { path: 'alertmanager' }));
const load = (name: string) => fixture<AlertmanagerNotification>(`alertmanager-${name}.json`);

describe('transforms/alertmanager.ts', () => {
  it('fans a group out: an agent run for a critical alert, a wake for a warning, one wake for the resolved', () => {
    expect(run(load('group'))).toEqual([
      {
        kind: 'agent',
        sessionKey: 'hook:alert:c2a4b3d0e9f81a7c',
        message: [
          'FIRING HostDiskFilling (critical) on db-2:9100: /var on db-2 will be full within 4 hours',
          'Filesystem /var is at 91% and growing 3%/h.',
          'Since 2026-11-20T09:10:30.000Z',
          'Runbook: https://runbooks.example.net/disk-filling',
          'http://prometheus.internal:9090/graph?g0.expr=predict_linear%28node_filesystem_avail_bytes%5B6h%5D%2C+4%2A3600%29+%3C+0',
        ].join('\n'),
      },
      {
        kind: 'wake',
        mode: 'now',
        text: [
          'FIRING HostDiskFilling (warning) on web-1:9100: / on web-1 will be full within 24 hours',
          'Since 2026-11-20T08:55:00.000Z',
          'http://prometheus.internal:9090/graph?g0.expr=predict_linear%28node_filesystem_avail_bytes%5B6h%5D%2C+24%2A3600%29+%3C+0',
        ].join('\n'),
      },
      { kind: 'wake', mode: 'next-heartbeat', text: 'Resolved (1):\n- HostDiskFilling on db-1:9100 (resolved 2026-11-20T09:05:00.000Z)' },
    ]);
  });

  it('turns a notification of resolved alerts into one wake for the next heartbeat', () => {
    expect(run(load('resolved'))).toEqual([
      { kind: 'wake', mode: 'next-heartbeat', text: 'Resolved (1):\n- HostDiskFilling on db-2:9100 (resolved 2026-11-20T10:20:00.000Z)' },
    ]);
  });

  it('returns null for a group without alerts', () => {
    expect(run({ ...load('group'), alerts: [] })).toBeNull();
  });

  it('copes with alerts that carry few labels and annotations', () => {
    const n = load('group');
    n.alerts = [
      {
        status: 'firing',
        labels: { job: 'backup' },
        annotations: {},
        startsAt: '2026-11-20T01:00:00Z',
        endsAt: '0001-01-01T00:00:00Z',
        fingerprint: 'f1',
      },
    ];
    expect(run(n)).toEqual([{ kind: 'wake', mode: 'now', text: 'FIRING alert (none) in backup\nSince 2026-11-20T01:00:00Z' }]);
  });
});
