/**
 * A real service with presets enabled, for the presets' tests (docs/presets.md): requests over HTTP
 * through the whole pipeline, the runs and kept requests read back through the API, and checks that
 * every preset's messages share (inside `maxChars`, no raw JSON).
 */
import { expect } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { stripBoundary } from '../../src/safety/boundary.ts';
import { type Service, startService } from '../../src/service.ts';
import { cleanup, get, tempDir } from './cli.ts';
import { testConfig } from './runtime.ts';

export const HOOK_TOKEN = 'hook-token-0123456789abcdef0123';
export const GATEWAY_TOKEN = 'gateway-token-0123456789abcdef01';

export interface PresetService {
  svc: Service;
  /** POSTs raw bytes to `/hooks/<path>` with `headers`; the answer's status and JSON body (if any). */
  send(path: string, body: string | Buffer, headers: Record<string, string>): Promise<{ status: number; body: any; text: string }>;
  /** The stored agent message of a run, or the text of an event, as the agent or main session sees it. */
  messageOf(answer: { body: any }): Promise<string>;
  /** The kept requests, newest first. */
  requests(): Promise<any[]>;
  close(): Promise<void>;
}

/** A service with `presets` (entries of `hooks.presets`) and nothing else enabled; runs are stored, not delivered. */
export async function presetService(presets: unknown[], extra: Record<string, unknown> = {}): Promise<PresetService> {
  const dir = tempDir('hook-intake-preset-');
  const config = {
    gateway: { auth: { token: GATEWAY_TOKEN } },
    hooks: { enabled: true, token: HOOK_TOKEN, presets, maxQueuedRuns: 100000 },
    agents: { defaults: { heartbeat: { every: '0' } } },
    ...extra,
  };
  const loaded = testConfig(config, dir);
  const svc = await startService({ load: () => loaded, initial: loaded, logger: createLogger('silent'), port: 0, watch: false });
  const base = svc.url;
  return {
    svc,
    async send(path, body, headers) {
      const res = await fetch(`${base}/hooks/${path}`, { method: 'POST', headers, body });
      const text = await res.text();
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      return { status: res.status, body: json, text };
    },
    async messageOf(answer) {
      if (answer.body?.runId) return (await get(`${base}/api/runs/${answer.body.runId}`, GATEWAY_TOKEN)).body.run.message;
      const events = (await get(`${base}/api/main/events?limit=10000`, GATEWAY_TOKEN)).body.events as { id: string; text: string }[];
      return events.find((e) => e.id === answer.body?.eventId)?.text ?? '';
    },
    async requests() {
      return (await get(`${base}/api/requests?limit=10000`, GATEWAY_TOKEN)).body.requests;
    },
    async close() {
      await svc.stop();
      cleanup(dir);
    },
  };
}

/** The hook content of a message: what stands between the boundary's markers. */
export function inner(message: string): string {
  return stripBoundary(message).trim();
}

/**
 * What every preset message must be: within `maxChars` (plus the line saying what was cut), and
 * not the payload dumped as JSON.
 */
export function expectPresetMessage(message: string, maxChars = 4000): void {
  const content = inner(message);
  expect(content.length, 'the message is empty').toBeGreaterThan(0);
  const cutNote = /\n\[… [\d,]+ more characters not shown\]$/;
  expect(content.replace(cutNote, '').length).toBeLessThanOrEqual(maxChars);
  expect(content.trimStart().startsWith('{'), `a raw JSON dump:\n${content.slice(0, 300)}`).toBe(false);
  expect(/"[\w-]+":\s*[{["\d]/.test(content), `JSON in the message:\n${content.slice(0, 300)}`).toBe(false);
}
