/**
 * The `gateway` agent provider: hands each hook run to another gateway's `POST <url>/agent` (the
 * hooks contract: bearer token, JSON `message`, `name`, `sessionKey`, …) and a heartbeat's events to
 * its `POST <url>/wake`. The other gateway runs its agent and delivers the reply itself, so the run
 * here ends with `forwarded: {runId}` and nothing to deliver.
 *
 * Every attempt of one run carries `Idempotency-Key: <runId>`, so a retry, or the run started again
 * after a restart, does not start a second run there. A 408, 425, 429, 5xx or network failure is
 * tried again (after Retry-After when given) up to `maxRetries` times within the run's deadline;
 * any other answer that is not 2xx ends the run with that answer's message. Errors and log lines
 * never carry the token, and name the gateway by scheme, host and path only.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  errorDetail,
  isRetryableStatus,
  networkReason,
  parseRetryAfter,
  PluginConfigError,
  readCapped,
  redact,
  shorten,
  type AgentProvider,
  type AgentReply,
  type AgentRequest,
  type PluginContext,
} from 'hook-intake/plugin';
import type { GatewayConfigValue } from './config.ts';
import { agentBody, wakeBody } from './body.ts';

const ANSWER_BYTES = 64 * 1024;
const DETAIL_CHARS = 300;
const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8_000;

/** An attempt that may be made again: why it failed, and when the gateway asked to be tried again. */
interface Retryable {
  error: string;
  retryAfterMs: number | undefined;
}

/** The hooks base as given (a query kept), and the form errors show: scheme, host and path. */
function baseOf(url: string): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new PluginConfigError('url', `"${url}" is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new PluginConfigError('url', 'must be an http:// or https:// URL');
  if (u.username || u.password) throw new PluginConfigError('url', 'must not hold credentials; the token goes in `token`');
  if (u.searchParams.has('token')) throw new PluginConfigError('url', 'must not hold the token; it goes in `token`');
  u.hash = '';
  return u;
}

function endpoint(base: URL, path: 'agent' | 'wake'): { url: string; shown: string } {
  const u = new URL(base);
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/${path}`;
  return { url: u.href, shown: `${u.origin}${u.pathname}` };
}

/** The run id the gateway answered with (`{ok: true, runId}`), or null when it named none. */
function runIdOf(text: string): string | null {
  try {
    const j = JSON.parse(text) as { runId?: unknown } | null;
    return typeof j?.runId === 'string' && j.runId ? j.runId : null;
  } catch {
    return null;
  }
}

export function createGatewayProvider(config: GatewayConfigValue, ctx: PluginContext): AgentProvider {
  const base = baseOf(config.url);
  const secrets = [config.token];
  const fail = (message: string) => new Error(redact(message, secrets));

  /** One attempt: the run id on a 2xx, a `Retryable` for a failure worth repeating; throws on any other answer. */
  async function attempt(target: { url: string; shown: string }, body: string, req: AgentRequest): Promise<string | null | Retryable> {
    const headers = {
      authorization: `Bearer ${config.token}`,
      'content-type': 'application/json',
      accept: 'application/json',
      'idempotency-key': req.runId,
    };
    const signal = AbortSignal.any([req.signal, AbortSignal.timeout(config.requestTimeoutMs)]);
    const started = ctx.clock();
    let res: Response;
    let text: string;
    try {
      // a redirect is not followed: the url is wrong, and following it would hand the token on
      res = await ctx.fetch(target.url, { method: 'POST', headers, body, signal, redirect: 'manual' });
      text = (await readCapped(res, ANSWER_BYTES)).text;
    } catch (err) {
      if (req.signal.aborted) throw req.signal.reason;
      const why = signal.aborted ? `no answer within ${config.requestTimeoutMs} ms` : networkReason(err);
      return { error: redact(`request to ${target.shown} failed: ${why}`, secrets), retryAfterMs: undefined };
    }
    const ms = ctx.clock() - started;
    if (res.ok) {
      const runId = runIdOf(text);
      ctx.logger.debug({ runId: req.runId, status: res.status, ms, forwardedRunId: runId }, 'forwarded');
      return runId;
    }
    ctx.logger.warn({ runId: req.runId, status: res.status, ms }, 'gateway refused');
    const detail = shorten(redact(errorDetail(text), secrets).replace(/\s+/g, ' ').trim(), DETAIL_CHARS);
    const error = `HTTP ${res.status} from ${target.shown}${detail ? `: ${detail}` : ''}`;
    if (res.status >= 300 && res.status < 400) throw fail(`${error} (a redirect, not followed: check url)`);
    if (!isRetryableStatus(res.status)) throw fail(error);
    return { error: redact(error, secrets), retryAfterMs: parseRetryAfter(res.headers.get('retry-after'), ctx.clock()) };
  }

  /** Waits before attempt `n + 1`, unless that would pass the run's deadline: then the failure stands. */
  async function pause(n: number, failed: Retryable, deadline: number, signal: AbortSignal): Promise<void> {
    const wait = failed.retryAfterMs ?? Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** n);
    if (ctx.clock() + wait >= deadline) throw fail(failed.error);
    try {
      await sleep(wait, undefined, { signal });
    } catch {
      throw signal.reason;
    }
  }

  async function send(target: { url: string; shown: string }, body: string, req: AgentRequest): Promise<string | null> {
    const deadline = ctx.clock() + req.timeoutMs;
    for (let n = 0; ; n++) {
      const r = await attempt(target, body, req);
      if (r === null || typeof r === 'string') return r;
      if (n >= config.maxRetries) throw fail(r.error);
      await pause(n, r, deadline, req.signal);
    }
  }

  return {
    async run(req: AgentRequest): Promise<AgentReply> {
      req.signal.throwIfAborted();
      // a hook run goes to /agent; a heartbeat (no hook action) hands its events to /wake
      const [target, body] = req.hook
        ? [endpoint(base, 'agent'), agentBody(config, req, req.hook)]
        : [endpoint(base, 'wake'), wakeBody(req)];
      const runId = await send(target, JSON.stringify(body), req);
      return { text: '', forwarded: { runId } };
    },
  };
}
