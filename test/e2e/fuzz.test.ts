/**
 * Property-based fuzzing of the running server (fast-check, the real CLI over
 * real sockets): generated bodies, bytes, paths, field values, media types
 * and signatures. Every answer must have a status and code listed in
 * docs/http.md ("Statuses and codes"), the one body shape, and no 5xx; where
 * the right answer is known in advance (the body schemas, signatures), it must
 * be that answer. Afterwards the process is alive and answers /healthz.
 */
import { isUtf8 } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeaders } from '../../src/auth/signing.ts';
import type { VerifySpec } from '../../src/auth/signatures.ts';
import { cleanup, get, type Running } from '../helpers/cli.ts';
import { exchange, HOSTILE_HOOK, startHostile, statusCodes, type Answer } from '../helpers/hostile.ts';

const CODES = statusCodes();
const SIGNED: VerifySpec = { type: 'hmac-sha256', secret: randomBytes(24).toString('hex') };
/** Runs of each property; every run is one request. */
const RUNS = { json: 250, bytes: 250, paths: 250, agent: 300, wake: 150, mediaTypes: 150, signed: 150 };

const NAMED = ['plain', 'json', 'each', 'tx', 'signed', 'nope'];
const TARGETS = ['wake', 'agent', ...NAMED];
const AUTH = { authorization: `Bearer ${HOSTILE_HOOK}` };

let srv: Running;
let requests = 0;

/** One request, each from an address of its own (the server trusts X-Forwarded-For): failures never add up to the throttle. */
async function send(path: string, body: Uint8Array | string, headers: Record<string, string> = {}): Promise<Answer> {
  requests++;
  const res = await fetch(`${srv.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...AUTH,
      'x-forwarded-for': `10.9.${(requests >> 8) & 255}.${requests & 255}`,
      ...headers,
    },
    body: typeof body === 'string' ? body : Buffer.from(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: Object.fromEntries(res.headers), body: text, json };
}

/** The answer is documented: listed status, listed code, the one shape, never a 5xx. */
function documented(a: Answer): void {
  expect(CODES.has(a.status), `status ${a.status}: ${a.body.slice(0, 200)}`).toBe(true);
  expect(a.status, a.body.slice(0, 200)).toBeLessThan(500);
  if (a.status === 204) {
    expect(a.body).toBe('');
    return;
  }
  if (a.status < 300) {
    expect(a.json?.ok).toBe(true);
    return;
  }
  expect(a.json, a.body.slice(0, 200)).toMatchObject({ ok: false, error: expect.any(String), code: expect.any(String) });
  expect(Object.keys(a.json).every((k) => ['ok', 'error', 'code', 'field'].includes(k))).toBe(true);
  expect(CODES.get(a.status)).toContain(a.json.code);
}

async function alive(): Promise<void> {
  expect(srv.proc.exitCode).toBeNull();
  expect((await get(`${srv.url}/healthz`)).status).toBe(200);
}

/**
 * What the server makes of a body, by the rules of docs/http.md: valid JSON
 * (UTF-8, a BOM skipped), or refused as INVALID_JSON, which includes a
 * `__proto__` key or a `constructor` holding a `prototype` at any depth.
 */
function parses(raw: Buffer): boolean {
  if (!raw.length || !isUtf8(raw)) return false;
  let text = raw.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let poisoned = false;
  try {
    JSON.parse(text, (key, value) => {
      if (
        key === '__proto__' ||
        (key === 'constructor' && value !== null && typeof value === 'object' && Object.hasOwn(value, 'prototype'))
      )
        poisoned = true;
      return value;
    });
  } catch {
    return false;
  }
  return !poisoned;
}

/** Length as the schema validator counts it: code points. */
const len = (s: string) => [...s].length;
const isString = (v: unknown): v is string => typeof v === 'string';

/** The fields of an agent body that are invalid (empty: the body is valid), by the rules of docs/http.md. */
function invalidAgentFields(body: Record<string, unknown>): Set<string> {
  const bad = new Set<string>();
  const rules: Record<string, (v: unknown) => boolean> = {
    message: (v) => isString(v) && len(v) <= 1_000_000 && v.trim() !== '',
    name: (v) => isString(v) && len(v) >= 1 && len(v) <= 200,
    sessionKey: (v) => isString(v) && /^[A-Za-z0-9:._/-]{1,200}$/.test(v) && v.toLowerCase() !== 'main',
    wakeMode: (v) => v === 'now' || v === 'next-heartbeat',
    deliver: (v) => typeof v === 'boolean',
    channel: (v) => v === 'last' || v === 'console',
    to: (v) => isString(v) && len(v) >= 1 && len(v) <= 256,
    model: (v) => isString(v) && /^echo\/./.test(v) && len(v) <= 200,
    thinking: (v) => ['off', 'minimal', 'low', 'medium', 'high', 'xhigh'].includes(v as string),
    timeoutSeconds: (v) => typeof v === 'number' && v > 0 && v <= 86_400,
  };
  if (!('message' in body)) bad.add('message');
  for (const [k, v] of Object.entries(body)) if (!Object.hasOwn(rules, k) || !rules[k]!(v)) bad.add(k);
  return bad;
}

function invalidWakeFields(body: Record<string, unknown>): Set<string> {
  const bad = new Set<string>();
  if (!('text' in body)) bad.add('text');
  for (const [k, v] of Object.entries(body)) {
    if (k === 'text' && isString(v) && len(v) <= 20_000 && v.trim() !== '') continue;
    if (k === 'mode' && (v === 'now' || v === 'next-heartbeat')) continue;
    bad.add(k);
  }
  return bad;
}

const text = (max: number) => fc.string({ unit: 'binary', maxLength: max });

/**
 * Bodies for a schema: each field valid (and present or not), then, in about
 * half of the runs, one to three fields replaced by a nearly valid value or by
 * anything at all, or an unknown field added.
 */
function bodies(
  fields: Record<string, { valid: fc.Arbitrary<unknown>; near: fc.Arbitrary<unknown> }>,
  required: string,
  unknown: string[],
) {
  const names = Object.keys(fields);
  const valid = fc.record(Object.fromEntries(names.map((n) => [n, fields[n]!.valid])), { requiredKeys: [required] });
  const spoil = fc.tuple(
    fc.constantFrom(...names, ...unknown, `${required}!missing`),
    fc.oneof({ arbitrary: fc.constant('near' as const), weight: 2 }, { arbitrary: fc.constant('any' as const), weight: 1 }),
    fc.jsonValue({ maxDepth: 2 }),
  );
  const nears = fc.record(Object.fromEntries(names.map((n) => [n, fields[n]!.near])));
  const spoils = fc.oneof(
    { arbitrary: fc.constant([]), weight: 1 },
    { arbitrary: fc.array(spoil, { minLength: 1, maxLength: 3 }), weight: 1 },
  );
  return fc.tuple(valid, nears, spoils).map(([body, near, spoilt]) => {
    const out: Record<string, unknown> = { ...body };
    for (const [n, how, anything] of spoilt) {
      if (n === `${required}!missing`) delete out[required];
      else if (!fields[n] || how === 'any') out[n] = anything;
      else out[n] = near[n];
    }
    return out;
  });
}

const agentBody = bodies(
  {
    message: { valid: text(40).map((s) => `m${s}`), near: fc.constantFrom('', '   ', '\u00a0\n', 5, null, ['m']) },
    name: { valid: text(30).map((s) => `n${s}`), near: fc.constantFrom('', 'x'.repeat(201), 1, ' ') },
    sessionKey: {
      valid: fc.stringMatching(/^hook:[a-z0-9:._/-]{1,20}$/),
      near: fc.constantFrom('main', 'MAIN', 'has space', '', 'k'.repeat(201), 'ü', 'hook:ok'),
    },
    wakeMode: { valid: fc.constantFrom('now', 'next-heartbeat'), near: fc.constantFrom('NOW', 'later', '', 'now') },
    deliver: { valid: fc.boolean(), near: fc.constantFrom('true', 0, 1, false) },
    channel: { valid: fc.constantFrom('last', 'console'), near: fc.constantFrom('telegram', '', 'Last', 'x'.repeat(101), 'console') },
    to: { valid: text(20).map((s) => `t${s}`), near: fc.constantFrom('', 'x'.repeat(257), 4915, 'x'.repeat(256)) },
    model: {
      valid: fc.constantFrom('echo/echo', 'echo/anything'),
      near: fc.constantFrom('echo', 'echo/', '/echo', 'nope/x', 'constructor/x', '', 'echo/x'),
    },
    thinking: {
      valid: fc.constantFrom('off', 'minimal', 'low', 'medium', 'high', 'xhigh'),
      near: fc.constantFrom('max', 'HIGH', '', 'low'),
    },
    timeoutSeconds: {
      valid: fc.double({ min: 0.001, max: 86_400, noNaN: true }),
      near: fc.constantFrom(0, -1, 86_401, '30', 1e308, 86_400, 1e-9),
    },
  },
  'message',
  ['sessionkey', 'extra', 'text'],
);

const wakeBody = bodies(
  {
    text: { valid: text(60).map((s) => `w${s}`), near: fc.constantFrom('', '  \t', 'x'.repeat(20_001), 7, null, 'x'.repeat(20_000)) },
    mode: { valid: fc.constantFrom('now', 'next-heartbeat'), near: fc.constantFrom('later', 'NOW', null, 'now') },
  },
  'text',
  ['txt', 'message'],
);

describe('fuzzing the running server', () => {
  beforeAll(async () => {
    srv = await startHostile({
      gateway: { trustProxy: true },
      // the fuzz does not test deadlines: on a loaded machine a short one would turn a valid body into a 408
      hooks: { bodyTimeoutMs: 30_000 },
      mappings: [
        {
          id: 'signed',
          match: { path: 'signed' },
          action: 'wake',
          textTemplate: 'signed {{kind}}',
          wakeMode: 'next-heartbeat',
          verify: SIGNED,
        },
      ],
    });
  });
  afterAll(async () => {
    console.info(`fuzz: ${requests} requests`);
    expect(await srv.stop()).toBe(0);
    expect(srv.output()).not.toContain('"level":"error"');
    cleanup(srv.dir);
  });

  it(`any JSON value to every hook (${RUNS.json} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...TARGETS), fc.jsonValue(), async (target, value) => {
        const a = await send(`/hooks/${target}`, JSON.stringify(value));
        documented(a);
        if (!parses(Buffer.from(JSON.stringify(value)))) {
          // not `return expect(…)`: an assertion object is not `undefined`, and fast-check counts it as a failed property
          expect(a.json?.code).toBe('INVALID_JSON');
          return;
        }
        const object = value !== null && typeof value === 'object' && !Array.isArray(value);
        if ((target === 'wake' || target === 'agent') && !object) expect(a.json).toMatchObject({ code: 'INVALID_PAYLOAD' });
        if (target === 'nope') expect(a.json).toMatchObject({ code: 'HOOK_NOT_FOUND' });
        if (target === 'tx' || target === 'plain') expect(a.status).toBe(200);
      }),
      // bodies with a `__proto__` key run every time (the generator makes them only now and then)
      {
        numRuns: RUNS.json,
        examples: [
          ['wake', JSON.parse('[{"__proto__":null}]')],
          ['tx', JSON.parse('{"a":{"__proto__":{}}}')],
        ],
      },
    );
    await alive();
  });

  it(`any bytes to every hook (${RUNS.bytes} runs)`, async () => {
    // random bytes, and JSON with bytes overwritten or inserted (broken UTF-8 inside otherwise good JSON)
    const mutated = fc
      .tuple(fc.jsonValue(), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.boolean()), { minLength: 1, maxLength: 4 }))
      .map(([v, edits]) => {
        const b = [...Buffer.from(JSON.stringify(v))];
        for (const [at, byte, insert] of edits) b.splice(at % (b.length + 1), insert ? 0 : 1, byte);
        return Uint8Array.from(b);
      });
    const anyBytes = fc.oneof(fc.uint8Array({ maxLength: 600 }), mutated);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...TARGETS), anyBytes, async (target, bytes) => {
        documented(await send(`/hooks/${target}`, bytes));
      }),
      { numRuns: RUNS.bytes },
    );
    await alive();
  });

  it(`any path under the hook prefix, sent verbatim (${RUNS.paths} runs)`, async () => {
    const piece = fc.oneof(
      fc.constantFrom(
        '.',
        '..',
        '/',
        '//',
        '%2F',
        '%2f',
        '%00',
        '%77',
        '%',
        '%G1',
        '\\',
        '?',
        '#',
        ';',
        '~',
        '@',
        ' ',
        '\t',
        '\0',
        '\r',
        'ä',
        '€',
        '😀',
        ...TARGETS,
      ),
      fc.string({ maxLength: 6 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 8 }), async (pieces) => {
        requests++;
        const body = '{"text":"fuzzed path","mode":"next-heartbeat"}';
        const target = `/hooks/${pieces.join('')}`;
        const e = await exchange(
          srv.url,
          [
            Buffer.concat([
              Buffer.from(
                `POST ${target} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${HOSTILE_HOOK}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
              ),
              Buffer.from(body),
            ]),
          ],
          { settleMs: 0 },
        );
        expect(e.answers.length, `no answer to ${JSON.stringify(target)}`).toBe(1);
        documented(e.answers[0]!);
      }),
      { numRuns: RUNS.paths },
    );
    await alive();
  });

  it(`agent bodies: 202 exactly when every field is valid, else 400 naming an invalid field (${RUNS.agent} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(agentBody, async (body) => {
        const sent = JSON.parse(JSON.stringify(body)) as Record<string, unknown>;
        const a = await send('/hooks/agent', JSON.stringify(sent));
        documented(a);
        if (!parses(Buffer.from(JSON.stringify(sent)))) {
          // not `return expect(…)`: an assertion object is not `undefined`, and fast-check counts it as a failed property
          expect(a.json?.code).toBe('INVALID_JSON');
          return;
        }
        const bad = invalidAgentFields(sent);
        if (!bad.size) expect(a.status, a.body).toBe(202);
        else {
          expect(a.status, `${[...bad].join(', ')}: ${a.body}`).toBe(400);
          expect(['INVALID_PAYLOAD', 'MODEL_NOT_ALLOWED']).toContain(a.json.code);
          expect([...bad], a.body).toContain(a.json.field);
        }
      }),
      { numRuns: RUNS.agent },
    );
    await alive();
  });

  it(`wake bodies: 200 exactly when every field is valid, else 400 naming an invalid field (${RUNS.wake} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(wakeBody, async (body) => {
        const sent = JSON.parse(JSON.stringify(body)) as Record<string, unknown>;
        const a = await send('/hooks/wake', JSON.stringify(sent));
        documented(a);
        if (!parses(Buffer.from(JSON.stringify(sent)))) {
          // not `return expect(…)`: an assertion object is not `undefined`, and fast-check counts it as a failed property
          expect(a.json?.code).toBe('INVALID_JSON');
          return;
        }
        const bad = invalidWakeFields(sent);
        if (!bad.size) expect(a.status, a.body).toBe(200);
        else {
          expect(a.status, a.body).toBe(400);
          expect([...bad], a.body).toContain(a.json.field);
        }
      }),
      { numRuns: RUNS.wake },
    );
    await alive();
  });

  it(`any Content-Type and Content-Encoding (${RUNS.mediaTypes} runs)`, async () => {
    const printable = fc.string({
      unit: fc.constantFrom(...' !#$%&\'*+-.0123456789;=ABCDEFGHIJKLMNOPQRSTUVWXYZ^_`abcdefghijklmnopqrstuvwxyz|~"/,'.split('')),
      maxLength: 40,
    });
    const structured = fc
      .tuple(
        fc.constantFrom('application', 'application', 'APPLICATION', 'text', 'multipart', 'x'),
        fc.constantFrom('json', 'JSON', 'vnd.x+json', 'json-patch+json', 'xml', 'x-www-form-urlencoded', 'plain', 'form-data'),
        fc.constantFrom('', '', '; charset=utf-8', '; charset="UTF-8"', '; charset=latin1', ';', '; a=b'),
      )
      .map(([type, subtype, params]) => `${type}/${subtype}${params}`);
    const mediaType = fc.oneof({ arbitrary: printable, weight: 1 }, { arbitrary: structured, weight: 3 });
    const encoding = fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 4 },
      { arbitrary: fc.constantFrom('identity', 'gzip', 'br', 'IDENTITY', 'identity, gzip'), weight: 1 },
      { arbitrary: printable, weight: 1 },
    );
    await fc.assert(
      fc.asyncProperty(mediaType, encoding, async (type, coding) => {
        const headers: Record<string, string> = { 'content-type': type };
        if (coding !== undefined) headers['content-encoding'] = coding;
        const a = await send('/hooks/wake', '{"text":"fuzzed media type","mode":"next-heartbeat"}', headers);
        documented(a);
        expect([200, 400, 415]).toContain(a.status);
        const base = type.split(';')[0]!.trim().toLowerCase();
        const plain = coding === undefined || coding.split(',').every((c) => ['', 'identity'].includes(c.trim().toLowerCase()));
        if (a.status === 200) expect(plain && /^application\/([\w.+-]+\+)?json$/.test(base), `${type} / ${coding}`).toBe(true);
        if (!plain) expect(a.status).toBe(415);
      }),
      { numRuns: RUNS.mediaTypes },
    );
    await alive();
  });

  it(`a signed hook: any body, with a valid or an arbitrary signature (${RUNS.signed} runs)`, async () => {
    const body = fc.oneof(
      fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v))),
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
    );
    const signature = fc.option(
      fc.oneof(fc.string({ maxLength: 80 }), fc.stringMatching(/^sha256=[0-9a-f]{64}$/), fc.base64String({ maxLength: 44 })),
      { nil: undefined },
    );
    await fc.assert(
      fc.asyncProperty(body, signature, fc.boolean(), async (raw, arbitrary, signs) => {
        const headers = signs
          ? signatureHeaders(SIGNED, raw, Date.now())
          : arbitrary === undefined
            ? {}
            : { 'x-signature': arbitrary.replace(/[^\t\x20-\x7e]/g, '') };
        // no hook token: the signature is the credential
        const a = await send('/hooks/signed', raw, { authorization: '', ...headers });
        documented(a);
        // the body is read and parsed before the owning mapping checks the signature
        if (!parses(raw)) expect(a.json?.code, a.body).toBe('INVALID_JSON');
        else if (signs) expect(a.status, a.body).toBe(200);
        else expect(a.json?.code, a.body).toBe('INVALID_SIGNATURE');
      }),
      { numRuns: RUNS.signed },
    );
    await alive();
  });
});
