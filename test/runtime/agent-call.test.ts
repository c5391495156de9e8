/**
 * oneLine(): summaries and error reasons on one line. It flattens only as much of a long text as
 * can show, so it is checked against flattening the whole text, on texts built to put whitespace
 * runs, and the end of each prefix it tries, in awkward places.
 *
 * Shutdown: what aborts the agent calls still running when the service stops.
 */
import { describe, expect, it } from 'vitest';
import { callAgent, isHeartbeatAck, oneLine, replySummary, Shutdown } from '../../src/runtime/agent-call.ts';
import { MARKER, notice, stripBoundary, wrapExternal } from '../../src/safety/boundary.ts';
import { scriptedProvider, testGeneration } from '../helpers/runtime.ts';
import { rng } from '../helpers/rng.ts';

/** What oneLine must return: the whole text flattened, then truncated. */
function whole(s: string, max: number): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

describe('oneLine()', () => {
  it('collapses whitespace, trims, and truncates with an ellipsis', () => {
    expect(oneLine('  The build failed in\n  step 3.  ', 300)).toBe('The build failed in step 3.');
    expect(oneLine('abcdef', 4)).toBe('abc…');
    expect(oneLine('abcd', 4)).toBe('abcd');
    expect(oneLine(' \n\t ', 10)).toBe('');
  });

  it('reads only the start of a long text and still gives what flattening all of it gives', () => {
    const long = 'row 0001: order shipped; '.repeat(4000);
    expect(oneLine(long, 300)).toBe(whole(long, 300));
    expect(oneLine(long, 300)).toHaveLength(300);
  });

  it('gives the same as flattening the whole text when whitespace shrinks the prefixes it tries', () => {
    const max = 20;
    const cases = [
      // whitespace that fills the first prefixes, then text
      `${' '.repeat(5000)}tail text that is long enough to be cut`,
      // text, then a whitespace run across the end of the first prefix, then more
      'x'.repeat(4 * (max + 2) - 3) + ' '.repeat(10) + 'y'.repeat(50),
      // exactly max + 1 and max + 2 visible characters followed by whitespace only
      'a'.repeat(max + 1) + ' '.repeat(4000),
      'a'.repeat(max + 2) + ' '.repeat(4000),
      'a'.repeat(max) + ' '.repeat(4000),
      'a '.repeat(3000),
    ];
    for (const s of cases) expect(oneLine(s, max), JSON.stringify(s.slice(0, 60))).toBe(whole(s, max));
  });

  it('agrees with flattening the whole text on random mixes of words and whitespace runs', () => {
    const rand = rng(7);
    const ws = [' ', '\n', '\t', '\r\n', '\u00a0', '\u2028'];
    for (let i = 0; i < 500; i++) {
      let s = '';
      const parts = Math.floor(rand() * 400);
      for (let p = 0; p < parts; p++) {
        s +=
          rand() < 0.5
            ? 'w'.repeat(Math.floor(rand() * 12))
            : ws[Math.floor(rand() * ws.length)]!.repeat(Math.floor(rand() * (rand() < 0.1 ? 400 : 4)));
      }
      const max = 1 + Math.floor(rand() * 60);
      expect(oneLine(s, max)).toBe(whole(s, max));
    }
  });
});

describe('replySummary()', () => {
  /** What it must return: the whole reply stripped of boundary lines, then on one line. */
  const expected = (s: string, max: number) => oneLine(stripBoundary(s), max);

  it('summarises an echo of a long wrapped message as stripping the whole of it would', () => {
    const message = 'row 0001: order shipped to warehouse 7; '.repeat(2600);
    const reply = wrapExternal(message, 'Webhook', 'ab12cd34');
    expect(replySummary(reply, 300)).toBe(expected(reply, 300));
    expect(replySummary(reply, 300).startsWith('row 0001')).toBe(true);
  });

  it('agrees with stripping the whole reply on random mixes of boundary lines, parts of them, words and line breaks', () => {
    const rand = rng(11);
    const pick = <T>(a: readonly T[]) => a[Math.floor(rand() * a.length)]!;
    const id = 'ab12cd34';
    const pieces = [
      notice('Webhook'),
      `<<<${MARKER} id="${id}" source="Webhook">>>`,
      `<<<END_${MARKER} id="${id}">>>`,
      `<<<${MARKER} id="${id}">>>`,
      'SECURITY NOTICE: the content between the markers below',
      'SECURITY NOTICE: the content between the markers below ',
      '<<<',
      '<<',
      `<<<${MARKER} id="zz">>>`,
      MARKER,
    ];
    const breaks = ['\n', '\r', '\r\n', '\u2028', '\u2029', ' ', ''];
    for (let i = 0; i < 400; i++) {
      let s = '';
      const parts = Math.floor(rand() * 60);
      for (let p = 0; p < parts; p++) {
        const r = rand();
        if (r < 0.3) s += pick(pieces);
        else if (r < 0.6) s += pick(breaks);
        else s += 'w'.repeat(Math.floor(rand() * (rand() < 0.2 ? 3000 : 30)));
      }
      const max = 1 + Math.floor(rand() * 300);
      expect(replySummary(s, max), JSON.stringify(s.slice(0, 80))).toBe(expected(s, max));
    }
  });

  it('strips a notice line only when the reply holds a marker somewhere, as stripBoundary does', () => {
    const withoutMarker = `${notice('Webhook')}\n${'x '.repeat(3000)}`;
    expect(replySummary(withoutMarker, 50)).toBe(expected(withoutMarker, 50));
    expect(replySummary(withoutMarker, 50).startsWith('SECURITY NOTICE')).toBe(true);
    const markerFarOn = `${withoutMarker}\n<<<${MARKER} id="ab12cd34">>>`;
    expect(replySummary(markerFarOn, 50)).toBe(expected(markerFarOn, 50));
    expect(replySummary(markerFarOn, 50).startsWith('x x')).toBe(true);
  });
});

describe('isHeartbeatAck()', () => {
  it('is true for HEARTBEAT_OK alone, in any case, with surrounding whitespace', () => {
    expect(isHeartbeatAck('HEARTBEAT_OK')).toBe(true);
    expect(isHeartbeatAck('  heartbeat_ok\n')).toBe(true);
    expect(isHeartbeatAck('HEARTBEAT_OK, and also')).toBe(false);
  });
});

describe('callAgent()', () => {
  it('passes on the usage a provider reports, and drops one that is not two non-negative integers, keeping the reply', async () => {
    const provider = scriptedProvider();
    const gen = testGeneration(
      { agents: { defaults: { model: 'sp/m' }, providers: { sp: { type: 'scripted' } } } },
      { plugins: [provider.plugin] },
    );
    let n = 0;
    const call = async (usage: unknown) => {
      n++;
      const done = callAgent(gen, {
        runId: 'r',
        sessionKey: 'hook:s',
        model: 'sp/m',
        thinking: null,
        messages: [{ role: 'user', content: 'hi' }],
        timeoutMs: 60_000,
        shutdown: new Shutdown(),
      });
      await provider.waitForCalls(n);
      provider.calls.at(-1)!.reply('ok', usage);
      return done;
    };
    expect(await call({ inputTokens: 12, outputTokens: 0 })).toEqual({
      status: 'ok',
      text: 'ok',
      usage: { inputTokens: 12, outputTokens: 0 },
    });
    expect(await call({ inputTokens: 12, outputTokens: 3, cached: 9 })).toEqual({
      status: 'ok',
      text: 'ok',
      usage: { inputTokens: 12, outputTokens: 3 },
    });
    for (const bad of [
      null,
      'many',
      { inputTokens: 1 },
      { inputTokens: -1, outputTokens: 2 },
      { inputTokens: 1.5, outputTokens: 2 },
      { inputTokens: '3', outputTokens: 2 },
    ])
      expect(await call(bad), JSON.stringify(bad)).toEqual({ status: 'ok', text: 'ok' });
  });
});

describe('Shutdown', () => {
  it('aborts the calls registered, with its reason, and no call that has left', () => {
    const sd = new Shutdown();
    const [a, b, gone] = [new AbortController(), new AbortController(), new AbortController()];
    sd.add(a);
    sd.add(gone);
    sd.add(b);
    sd.delete(gone);
    expect(sd.aborted).toBe(false);
    const reason = new Error('service shutting down');
    sd.abort(reason);
    expect(sd.aborted).toBe(true);
    expect(a.signal.reason).toBe(reason);
    expect(b.signal.reason).toBe(reason);
    expect(gone.signal.aborted).toBe(false);
    // a call registered afterwards is aborted at once; a second abort changes nothing
    const late = new AbortController();
    sd.add(late);
    expect(late.signal.reason).toBe(reason);
    sd.abort(new Error('again'));
    expect(a.signal.reason).toBe(reason);
  });

  it('ends a call still running as aborted, and leaves a finished call alone', async () => {
    const provider = scriptedProvider();
    const gen = testGeneration(
      { agents: { defaults: { model: 'sp/m' }, providers: { sp: { type: 'scripted' } } } },
      { plugins: [provider.plugin] },
    );
    const sd = new Shutdown();
    const call = () =>
      callAgent(gen, {
        runId: 'r',
        sessionKey: 'hook:s',
        model: 'sp/m',
        thinking: null,
        messages: [{ role: 'user', content: 'hi' }],
        timeoutMs: 60_000,
        shutdown: sd,
      });
    const done = call();
    await provider.waitForCalls(1);
    provider.calls[0]!.reply('finished');
    expect(await done).toEqual({ status: 'ok', text: 'finished' });
    const pending = call();
    await provider.waitForCalls(2);
    sd.abort(new Error('service shutting down'));
    expect(await pending).toEqual({ status: 'aborted' });
    expect(provider.calls[1]!.req.signal.aborted).toBe(true);
    expect(provider.calls[0]!.req.signal.aborted).toBe(false);
  });
});
