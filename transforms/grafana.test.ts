/**
 * The Grafana example: one wake per firing alert; resolved alerts dropped.
 */
import { describe, expect, it } from 'vitest';
import grafana, { type GrafanaNotification } from './grafana.ts';
import { context, fixture } from '../test/helpers/transform-context.ts';

const run = (payload: GrafanaNotification) => grafana(context(payload, { path: 'grafana' }));
const load = (name: string) => fixture<GrafanaNotification>(`grafana-${name}.json`);

describe('transforms/grafana.ts', () => {
  it('makes one wake now per firing alert, with its values and panel link', () => {
    expect(run(load('firing'))).toEqual([
      {
        kind: 'wake',
        mode: 'now',
        text: [
          'Grafana alert firing: Checkout p95 latency (API)',
          'p95 latency of checkout is above 800 ms',
          'The 5-minute p95 of checkout requests has been above 800 ms for 10 minutes.',
          'Values: B=912.4, C=1',
          'Since 2026-11-20T09:20:00Z',
          'https://grafana.example.net/d/checkout-slo?orgId=1&viewPanel=4',
        ].join('\n'),
      },
      {
        kind: 'wake',
        mode: 'now',
        text: [
          'Grafana alert firing: Checkout error rate (API)',
          'More than 2% of checkout requests fail',
          'Values: A=0.031',
          'Since 2026-11-20T09:22:00Z',
          // no panel or dashboard: the alert rule's own page
          'https://grafana.example.net/alerting/grafana/cpq3z8n/view?orgId=1',
        ].join('\n'),
      },
    ]);
  });

  it('returns null when every alert has resolved', () => {
    expect(run(load('resolved'))).toBeNull();
  });

  it('returns null for a notification without alerts', () => {
    expect(run({ status: 'firing', alerts: [] })).toBeNull();
  });
});
