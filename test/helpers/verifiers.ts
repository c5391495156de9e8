/** Building a built-in verifier and a request for it, as the intake hands one over (src/plugins/define.ts). */
import { signatureVerifiers } from '../../src/auth/verifiers.ts';
import type { PluginContext, Verifier, VerifyRequest } from '../../src/plugins/define.ts';

export const NOW_MS = 1_700_000_000_000;

export const makeVerifier = (type: string, options: Record<string, unknown>): Verifier =>
  signatureVerifiers.verifiers![type]!.create(options, {} as PluginContext);

/** A request at NOW_MS; the payload is parsed from `body` as JSON, else as a form, unless given. */
export function verifyRequest(over: Partial<VerifyRequest> & { body?: string } = {}): VerifyRequest {
  const body = over.body ?? '{}';
  let payload: unknown = over.payload;
  if (!('payload' in over)) {
    try {
      payload = JSON.parse(body);
    } catch {
      payload = Object.fromEntries(new URLSearchParams(body));
    }
  }
  return {
    name: 'hook',
    headers: {},
    url: '/hooks/hook',
    query: {},
    rawBody: Buffer.from(body),
    receivedAt: NOW_MS,
    ...over,
    payload,
  } as VerifyRequest;
}
