/**
 * Cases every chat channel's tests share: a reply of about 9,000 characters
 * and the checks on how it was split, the search of everything a failure
 * said for secrets, and a connection refused before anything was sent.
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { ChannelError, type Channel, type ChannelMessage } from '../../src/plugins/define.ts';
import { until } from './cli.ts';
import { deliverThroughOutbox } from './outbox-delivery.ts';
import { startProviderStub, type Answer, type ProviderStub, type Script, type StubRequest, type Validate } from './provider-stub.ts';

/** A long reply: paragraphs with bold and links, a list, a mass mention and a tall code block, over 9,000 characters. */
export function longReply(): string {
  const paragraph = (i: number) =>
    `Paragraph ${i}: the deploy of **service-${i}** finished; see [the log](https://ci.example.com/${i}) for details. `.repeat(3).trim();
  const code = Array.from({ length: 60 }, (_, i) => `step_${i} = run("job-${i}")  # line ${i}`).join('\n');
  const list = Array.from({ length: 30 }, (_, i) => `- item ${i} is done`).join('\n');
  const text = [
    paragraph(1),
    paragraph(2),
    'Heads up @everyone and @here.',
    list,
    `\`\`\`python\n${code}\n\`\`\``,
    ...Array.from({ length: 18 }, (_, i) => paragraph(i + 3)),
  ].join('\n\n');
  expect(text.length).toBeGreaterThan(9000);
  return text;
}

/** Pieces of longReply() that every channel's rendering keeps as written, in their order. */
export const LONG_REPLY_PIECES = [
  'Paragraph 1:',
  'Paragraph 2:',
  'item 0 is done',
  'item 29 is done',
  'step_0 = run("job-0")',
  'step_59 = run("job-59")',
  'Paragraph 3:',
  'Paragraph 20:',
];

/** Each of `pieces` is in `text`, one after the other. */
export function expectInOrder(text: string, pieces: readonly string[]): void {
  let at = -1;
  for (const piece of pieces) {
    const found = text.indexOf(piece, at + 1);
    expect(found, `"${piece}" after position ${at}`).toBeGreaterThan(at);
    at = found;
  }
}

export interface SplitRules {
  /** The most a part may measure. */
  limit: number;
  /** How a part is measured; UTF-16 units unless given. */
  measure?: (text: string) => number;
  maxLines?: number;
  /** Every code fence a part opens is closed in it (``` counted anywhere, as WhatsApp's monospace block has it inline). */
  fences?: boolean;
  /** Pieces the parts hold in this order; LONG_REPLY_PIECES unless given. */
  pieces?: readonly string[];
  /** The fewest parts expected. */
  atLeast?: number;
}

/** The parts of a long reply: more than one, each within the limits, the reply's pieces in order across them. */
export function expectSplit(parts: readonly string[], rules: SplitRules): void {
  const measure = rules.measure ?? ((t: string) => t.length);
  expect(parts.length).toBeGreaterThanOrEqual(rules.atLeast ?? 2);
  for (const part of parts) {
    expect(measure(part), part.slice(0, 80)).toBeLessThanOrEqual(rules.limit);
    if (rules.maxLines !== undefined) expect(part.split('\n').length).toBeLessThanOrEqual(rules.maxLines);
    if (rules.fences) expect((part.match(/```/g) ?? []).length % 2, part).toBe(0);
  }
  expectInOrder(parts.join('\n'), rules.pieces ?? LONG_REPLY_PIECES);
}

/** Renders `markdown` as the outbox does at the first attempt, then sends each part in order; returns the parts. */
export async function deliverParts(
  channel: Channel,
  markdown: string,
  message: (over: Partial<ChannelMessage>) => ChannelMessage,
): Promise<string[]> {
  const parts = channel.render!(markdown);
  for (const [i, text] of parts.entries()) await channel.send(message({ text, part: i + 1, parts: parts.length }));
  return parts;
}

/** The ChannelError `p` fails with. */
export async function caught(p: Promise<unknown>): Promise<ChannelError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ChannelError);
  return err as ChannelError;
}

/** Every way an error can be shown: message, String, stack, JSON and its cause. */
export function shownOf(err: unknown): string {
  const e = err as Error & { cause?: unknown };
  return [e?.message, String(err), e?.stack ?? '', JSON.stringify(err), String(e?.cause ?? '')].join('\n');
}

/** None of `secrets` is in `text`. */
export function expectNoneOf(text: string, secrets: readonly string[]): void {
  for (const secret of secrets) expect(text, 'a secret was shown').not.toContain(secret);
}

/**
 * Answers one request with each of `answers` in turn and collects all that
 * the failures said; `fail(last)` makes the request (`last` for the final
 * answer, which may need a client with a short deadline).
 */
export async function failuresSaid(
  stub: ProviderStub,
  answers: ReadonlyArray<(req: StubRequest) => Answer>,
  fail: (last: boolean) => Promise<unknown>,
): Promise<string> {
  const said: string[] = [];
  for (const [i, answer] of answers.entries()) {
    stub.setScript(answer);
    const err = await fail(i === answers.length - 1);
    expect(err).toBeInstanceOf(ChannelError);
    said.push(shownOf(err));
  }
  return said.join('\n');
}

/**
 * A stand-in of its own for each test: `start(script)` starts it; after the
 * test it is closed, and every request it saw, failures included, must be
 * one the provider's spec allows.
 */
export function standInPerTest(validate: Validate): (script: Script) => Promise<ProviderStub> {
  let stub: ProviderStub | undefined;
  afterEach(async () => {
    const done = stub;
    stub = undefined;
    await done?.close();
    done?.expectClean();
  });
  return async (script) => (stub = await startProviderStub({ validate, script }));
}

/** An answer, or one made from the request. */
export type Scripted = Answer | ((req: StubRequest) => Answer);

export interface QueuedStandIn {
  /** The stand-in, running from the first test of the block. */
  stub: ProviderStub;
  /** This test's answers for its next requests, in order; cleared before each test. */
  answers: Scripted[];
}

/**
 * One stand-in for a describe block: a request takes the next of the test's
 * `answers`, else `fallback`. After each test, every request it saw must be
 * one the spec allows, and its record is cleared for the next.
 */
export function queuedStandIn(validate: Validate, fallback: (req: StubRequest) => Answer): QueuedStandIn {
  const q = { answers: [] } as unknown as QueuedStandIn;
  beforeAll(async () => {
    q.stub = await startProviderStub({
      validate,
      script: (req) => {
        const next = q.answers.shift() ?? fallback;
        return typeof next === 'function' ? next(req) : next;
      },
    });
  });
  afterAll(() => q.stub.close());
  beforeEach(() => {
    q.answers = [];
  });
  afterEach(() => {
    q.stub.expectClean();
    q.stub.requests.length = 0;
  });
  return q;
}

/**
 * A send that the service's shutdown aborts while the service has not answered
 * (the caller's stand-in hangs) ends with the shutdown's reason, not a delivery
 * error (which would count an attempt). The abort comes once `arrived()` says
 * the request is at the stand-in, so a slow machine cannot abort it earlier.
 */
export async function expectShutdownReason(send: (signal: AbortSignal) => Promise<unknown>, arrived: () => boolean): Promise<void> {
  const stop = new AbortController();
  const sending = send(stop.signal);
  sending.catch(() => undefined);
  await until(arrived);
  stop.abort(new Error('shutting down'));
  await expect(sending).rejects.toThrow('shutting down');
}

/**
 * A reply the stand-in refuses for good, carried by the real outbox: the
 * delivery fails after one attempt and one request with `reason`, the log
 * says so, and neither the log nor the stored record holds a secret or the
 * reply.
 */
export async function expectFailedOnceThroughOutbox(
  stub: ProviderStub,
  config: Record<string, unknown>,
  d: { channel: string; to: string },
  reason: string,
  secrets: readonly string[],
): Promise<void> {
  const reply = 'CONFIDENTIAL-REPLY';
  const { delivery, log, record } = await deliverThroughOutbox(config, { ...d, text: reply });
  expect(delivery).toMatchObject({ status: 'failed', attempts: 1, reason });
  expect(stub.requests).toHaveLength(1);
  expect(log).toContain('delivery failed');
  expectNoneOf(log, [...secrets, reply]);
  expectNoneOf(record, secrets);
}

/** The URL of a server that was started and closed: connecting to it is refused. */
export async function closedUrl(): Promise<string> {
  const gone = await startProviderStub();
  await gone.close();
  return gone.url;
}

/** A send to a closed server: a transient error, not an ambiguous one (nothing was sent), whose message matches `message`. */
export async function expectRefusedRetried(send: (url: string) => Promise<unknown>, message: RegExp = /ECONNREFUSED/): Promise<void> {
  const err = await send(await closedUrl()).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ChannelError);
  expect(err).toMatchObject({ retryable: true, ambiguous: false });
  expect((err as Error).message).toMatch(message);
}
