/**
 * What the presets' transforms share (docs/presets.md, "How a preset is made"): short lines from
 * provider data, a summary of an event no preset knows, a session key in the allowed form, and the
 * result for the mapping's action. Plain functions, no I/O: they run in the transform workers.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';

/** A value as one short line: whitespace collapsed, cut at `max` characters with an ellipsis. */
export function oneLine(value: unknown, max = 200): string {
  if (value === undefined || value === null) return '';
  const s = (typeof value === 'string' ? value : String(value)).replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1).trimEnd()}…` : s;
}

/** A text kept as written (paragraphs and lists stay readable), trimmed, cut at `max` characters. */
export function block(value: unknown, max = 1500): string {
  if (typeof value !== 'string') return '';
  const s = value
    .replace(/\r\n?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return s.length > max ? `${s.slice(0, max - 1).trimEnd()}…` : s;
}

/** The lines of a message, without the empty ones. */
export function lines(...parts: (string | undefined | null | false)[]): string {
  return parts.filter((p): p is string => typeof p === 'string' && p.trim() !== '').join('\n');
}

// Currencies counted in whole units, and in thousandths (ISO 4217 minor units, as Stripe and Paddle count them).
const ZERO_DECIMAL = new Set('bif clp djf gnf jpy kmf krw mga pyg rwf ugx vnd vuv xaf xof xpf'.split(' '));
const THREE_DECIMAL = new Set('bhd iqd jod kwd lyd omr tnd'.split(' '));

/**
 * An amount given in the currency's smallest unit (a number, or digits as Paddle sends them) as people
 * write it: `1099, 'usd'` → `10.99 USD`, `500, 'JPY'` → `500 JPY`; empty when it is not an amount.
 */
export function money(amount: unknown, currency: unknown): string {
  const n = typeof amount === 'string' && /^-?\d{1,18}$/.test(amount) ? Number(amount) : amount;
  if (typeof n !== 'number' || !Number.isFinite(n)) return '';
  const c = typeof currency === 'string' ? currency.toLowerCase() : '';
  const digits = ZERO_DECIMAL.has(c) ? 0 : THREE_DECIMAL.has(c) ? 3 : 2;
  return `${(n / 10 ** digits).toFixed(digits)}${c ? ` ${c.toUpperCase()}` : ''}`;
}

const SHOWN = 12;

/**
 * An event no preset message covers, in a few lines and never as raw JSON: each top-level field that is
 * a short value as `key: value`, an object by what names it (`name`, `title`, `login`, `id`), a list by
 * its length; at most a dozen fields, the rest counted.
 */
export function summarize(payload: unknown): string {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return oneLine(payload);
  const out: string[] = [];
  const keys = Object.keys(payload);
  for (const key of keys) {
    if (out.length === SHOWN) break;
    const shown = fieldText((payload as Record<string, unknown>)[key]);
    if (shown) out.push(`${key}: ${shown}`);
  }
  if (keys.length > out.length) out.push(`(${keys.length - out.length} more fields)`);
  return out.join('\n');
}

function fieldText(v: unknown): string {
  if (v === null || v === undefined || v === '') return '';
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return oneLine(v, 120);
  if (Array.isArray(v)) return `${v.length} item${v.length === 1 ? '' : 's'}`;
  const o = v as Record<string, unknown>;
  for (const k of ['name', 'title', 'full_name', 'login', 'email', 'key', 'id']) {
    const n = o[k];
    if (typeof n === 'string' || typeof n === 'number') return oneLine(n, 120);
  }
  return '';
}

/** A session key in the allowed form (`A-Z a-z 0-9 : . _ / -`, at most 200 characters) from its parts. */
export function sessionKey(...parts: (string | number | undefined | null)[]): string {
  const key = parts
    .filter((p) => p !== undefined && p !== null && p !== '')
    .map((p) => String(p).replace(/[^A-Za-z0-9:._/-]+/g, '_'))
    .join(':');
  return key.slice(0, 200);
}

/**
 * The transform's result for the mapping's action: an agent run with the message in the session
 * (the `sessionKey` option, when the operator set one, wins), or the message as a wake's text.
 */
export function result(ctx: TransformContext, message: string, key: string | undefined): TransformResult {
  if (ctx.action.kind === 'wake') return { kind: 'wake', text: message };
  const chosen = 'sessionKey' in ctx.action ? ctx.action.sessionKey : undefined;
  return { message, ...(chosen || key ? { sessionKey: chosen || key } : {}) };
}
