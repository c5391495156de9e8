/**
 * The provider stand-in: it records requests, checks each against the
 * validator, answers from a script as data (status, hang, reset) and reports
 * anything unexpected as a problem.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { always, startProviderStub, type ProviderStub } from '../helpers/provider-stub.ts';

let stub: ProviderStub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('startProviderStub', () => {
  it('records method, path, query, headers and the parsed JSON and form bodies', async () => {
    stub = await startProviderStub({ script: always({ status: 200, json: { ok: true } }) });
    await post(`${stub.url}/a/b?x=1&x=2&y=3`, { hello: 'world' }, { 'x-test': 'yes' });
    await fetch(`${stub.url}/form`, { method: 'POST', body: new URLSearchParams({ channel: 'C1', text: 'a&b' }) });
    const [first, second] = stub.requests;
    expect(first).toMatchObject({
      method: 'POST',
      path: '/a/b',
      query: { x: ['1', '2'], y: '3' },
      contentType: 'application/json',
      body: { hello: 'world' },
    });
    expect(first!.headers['x-test']).toBe('yes');
    expect(first!.raw.toString()).toBe('{"hello":"world"}');
    expect(second).toMatchObject({ contentType: 'application/x-www-form-urlencoded', body: { channel: 'C1', text: 'a&b' } });
    stub.expectClean();
  });

  it('answers from the script in order, with status, JSON and headers', async () => {
    stub = await startProviderStub({
      script: [
        { status: 429, json: { ok: false, parameters: { retry_after: 3 } }, headers: { 'retry-after': '3' } },
        { status: 200, json: { ok: true } },
      ],
    });
    const a = await post(stub.url, {});
    expect(a.status).toBe(429);
    expect(a.headers.get('retry-after')).toBe('3');
    expect(await a.json()).toEqual({ ok: false, parameters: { retry_after: 3 } });
    expect((await post(stub.url, {})).status).toBe(200);
    stub.expectClean();
  });

  it('reports a request the script has no answer for', async () => {
    stub = await startProviderStub({ script: [] });
    expect((await post(`${stub.url}/x`, {})).status).toBe(500);
    expect(stub.problems).toEqual(['#0 POST /x: no scripted answer left']);
    expect(() => stub!.expectClean()).toThrow(/no scripted answer/);
  });

  it('collects what the validator finds and fails expectClean()', async () => {
    stub = await startProviderStub({ validate: (req) => (req.body?.text ? [] : ['text is required']), script: always({ status: 200 }) });
    await post(`${stub.url}/send`, { text: 'ok' });
    await post(`${stub.url}/send`, { txt: 'no' });
    expect(stub.problems).toEqual(['#1 POST /send: text is required']);
    expect(() => stub!.expectClean()).toThrow(/text is required/);
  });

  it('reports a body that claims JSON but does not parse', async () => {
    stub = await startProviderStub({ script: always({ status: 200 }) });
    await fetch(stub.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope' });
    expect(stub.problems.join()).toMatch(/not JSON/);
  });

  it('hangs (the client gives up) and resets the connection', async () => {
    stub = await startProviderStub({ script: [{ hang: true }, { destroy: true }] });
    const timedOut = await fetch(stub.url, { method: 'POST', body: '{}', signal: AbortSignal.timeout(200) }).catch((e: Error) => e);
    expect((timedOut as Error).name).toBe('TimeoutError');
    const reset = await post(stub.url, {}).catch((e: Error) => e);
    expect(reset).toBeInstanceOf(TypeError);
    expect(stub.requests).toHaveLength(2);
    stub.expectClean();
  });
});
