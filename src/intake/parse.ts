/**
 * Media type check and body parsing. JSON is parsed with prototype-poisoning
 * protection (`__proto__`, `constructor.prototype` refused as INVALID_JSON).
 * Every hook also takes a form post (`application/x-www-form-urlencoded`):
 * `/hooks/wake` and `/hooks/agent` read their typed fields from it, and a named
 * hook gets an object of the fields (Slack slash commands, Twilio, Mailgun).
 */
import { isUtf8 } from 'node:buffer';
import sjson from 'secure-json-parse';
import { errors } from '../errors.ts';

export type BodyKind = 'json' | 'form';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;

/** Which parser applies, or a 415. */
export function mediaKind(contentType: string | undefined): BodyKind {
  if (!contentType) throw errors.unsupportedMediaType('Content-Type is missing; send application/json');
  const semi = contentType.indexOf(';');
  const type = (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  if (semi !== -1) {
    const charset = /charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType.slice(semi))?.[1]?.toLowerCase();
    if (charset && charset !== 'utf-8' && charset !== 'utf8')
      throw errors.unsupportedMediaType(`charset "${charset}" is not supported; send UTF-8`);
  }
  if (JSON_TYPE.test(type)) return 'json';
  if (type === 'application/x-www-form-urlencoded') return 'form';
  throw errors.unsupportedMediaType(`Content-Type "${type}" is not supported; send application/json`);
}

/**
 * Bodies are taken as sent: a compressed body (any `Content-Encoding` but
 * `identity`, any transfer coding but `chunked`) is refused rather than
 * parsed as if it were plain JSON.
 */
export function requireIdentityEncoding(contentEncoding: string | undefined, transferEncoding?: string): void {
  if (contentEncoding && !onlyCodings(contentEncoding, ['identity']))
    throw errors.unsupportedMediaType('Content-Encoding is not supported; send the body uncompressed');
  if (transferEncoding && !onlyCodings(transferEncoding, ['chunked', 'identity']))
    throw errors.unsupportedMediaType('transfer codings other than chunked are not supported; send the body uncompressed');
}

function onlyCodings(header: string, allowed: readonly string[]): boolean {
  return header.split(',').every((c) => {
    const coding = c.trim().toLowerCase();
    return coding === '' || allowed.includes(coding);
  });
}

const PARSE_OPTS = { protoAction: 'error', constructorAction: 'error' } as const;

/**
 * Whether `text` may hold a `__proto__` or `constructor` key: in JSON a key is quoted, and spelling
 * one with an escape needs `\u`. Without any of the three, secure-json-parse's own check (two regular
 * expressions over the whole text, many times slower than these searches on a long body; measured:
 * docs/performance.md, "A 100 KiB agent request") cannot find one either, and the text is parsed as
 * plain JSON.
 */
const mayHoldProtoKey = (text: string) => text.includes('\\u') || text.includes('"__proto__"') || text.includes('"constructor"');

/**
 * Deepest nesting of arrays and objects a JSON body may have. Later steps
 * (templates rendering objects as JSON, transform calls, storage) recurse over
 * the payload, so a deeper body would overflow the stack there; no webhook
 * sender comes anywhere near this.
 */
export const MAX_JSON_DEPTH = 512;

export function parseJson(body: Buffer): unknown {
  return parseJsonText(jsonText(body));
}

/** The body as JSON text (UTF-8 checked, BOM dropped), before parsing; INVALID_JSON when it cannot be JSON. */
export function jsonText(body: Buffer): string {
  if (body.length === 0) throw errors.invalidJson('the body is empty');
  if (!isUtf8(body)) throw errors.invalidJson('the body is not valid UTF-8');
  const text = body.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Parses what `jsonText` returned. */
export function parseJsonText(text: string): unknown {
  if (nestedDeeperThan(text, MAX_JSON_DEPTH)) throw errors.invalidJson(`nested deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return mayHoldProtoKey(text) ? sjson.parse(text, null, PARSE_OPTS) : JSON.parse(text);
  } catch (err) {
    if (err instanceof RangeError) throw errors.invalidJson('nested too deeply');
    const msg = (err as Error).message;
    if (msg.startsWith('Object contains forbidden prototype property'))
      throw errors.invalidJson('forbidden key (__proto__ or constructor.prototype)');
    throw errors.invalidJson(syntaxDetail(msg));
  }
}

/** True when brackets outside strings open more than `max` levels at some point (a linear scan, no parse). */
function nestedDeeperThan(text: string, max: number): boolean {
  // a text with at most `max` opening brackets anywhere cannot be deeper: two native searches instead of
  // a loop over every character (measured: docs/performance.md, "Parsing and the safety boundary")
  if (openersAtMost(text, max)) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return false;
}

/** True when `text` holds at most `max` characters `{` and `[`, in strings or not. */
function openersAtMost(text: string, max: number): boolean {
  let n = 0;
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++n > max) return false;
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++n > max) return false;
  return true;
}

/**
 * The parser's reason without any of the body: V8 quotes a piece of the input
 * in some messages (`Unexpected token 'x', "…" is not valid JSON`), and an
 * error answer must not repeat what was sent (it may be a secret, and senders
 * show answers in their delivery logs).
 */
function syntaxDetail(msg: string): string {
  const at = / in JSON at position (\d+)/.exec(msg);
  const what = at ? msg.slice(0, at.index) : msg;
  if (at && !what.includes('"')) return `${what} at position ${at[1]}`.slice(0, 120);
  if (msg.startsWith('Unexpected end of JSON input')) return 'unexpected end of input';
  return at ? `syntax error at position ${at[1]}` : 'syntax error (unexpected character)';
}

/** Fields of a form post to `/wake` or `/agent` that are not strings in JSON. */
const FORM_BOOLEANS = new Set(['deliver', 'waitForCompletion']);
const FORM_NUMBERS = new Set(['timeoutSeconds']);

/**
 * A form post to `/wake` or `/agent`: their typed fields converted, anything
 * else a string. Each field of these endpoints holds one value, so a repeated
 * field is a 400 naming it rather than a guess at which value was meant.
 */
export function parseForm(body: Buffer): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, v] of formFields(body)) {
    if (Object.hasOwn(out, k)) throw errors.invalidPayload(k, 'appears more than once');
    if (FORM_BOOLEANS.has(k)) out[k] = v === 'true' ? true : v === 'false' ? false : v;
    else if (FORM_NUMBERS.has(k) && v.trim() !== '' && Number.isFinite(Number(v))) out[k] = Number(v);
    else out[k] = v;
  }
  return { ...out };
}

/**
 * A form post to a named hook: an object of the fields, each a string, and a
 * repeated field an array of its values in the order sent (`tag=a&tag=b` is
 * `{tag: ["a", "b"]}`), as form-posting senders (Twilio, Mailgun) repeat them.
 */
export function parseNamedForm(body: Buffer): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const [k, v] of formFields(body)) {
    const seen = out[k];
    if (seen === undefined) out[k] = v;
    else if (typeof seen === 'string') out[k] = [seen, v];
    else seen.push(v);
  }
  return { ...out };
}

/** The decoded fields of a form body, in order; names that could poison a prototype are refused. */
function* formFields(body: Buffer): Generator<[string, string]> {
  if (!isUtf8(body)) throw errors.invalidJson('the body is not valid UTF-8');
  for (const [k, v] of new URLSearchParams(body.toString('utf8'))) {
    if (k === '__proto__' || k === 'constructor' || k === 'prototype') throw errors.invalidPayload(k, 'forbidden field name');
    yield [k, v];
  }
}
