/**
 * The sending side of the HMAC signature schemes (auth/signature-schemes.ts): the headers a provider
 * would attach to `rawBody`. For tests and tooling (signing a request to try a
 * `verify` mapping end to end); the service itself never signs. Uses the same
 * key handling as the verifier, so a secret the verifier refuses is refused
 * here too.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { SCHEMES } from './signature-schemes.ts';
import { SignatureConfigError, verifySpecIssues, type VerifySpec } from './signatures.ts';

export interface SignOptions {
  /** Which configured secret to sign with (default 0). */
  secretIndex?: number;
  /** Standard Webhooks message id (default: a random `msg_…`). */
  messageId?: string;
}

/** Headers (lower-case names) carrying a valid signature of `rawBody` at time `nowMs`. */
export function signatureHeaders(spec: VerifySpec, rawBody: Uint8Array, nowMs: number, opts: SignOptions = {}): Record<string, string> {
  const issues = verifySpecIssues(spec);
  if (issues.length) throw new SignatureConfigError(issues);
  const scheme = SCHEMES[spec.type];
  const secrets = typeof spec.secret === 'string' ? [spec.secret] : spec.secret;
  const secret = secrets[opts.secretIndex ?? 0];
  if (secret === undefined) throw new RangeError(`no secret at index ${opts.secretIndex}`);
  const key = scheme.key(secret) as Buffer;
  const header = (spec.header ?? scheme.header).toLowerCase();
  const t = String(Math.floor(nowMs / 1000));
  const mac = (prefix: string) =>
    createHmac(scheme.digest ?? 'sha256', key)
      .update(Buffer.from(prefix, 'latin1'))
      .update(rawBody)
      .digest();

  switch (spec.type) {
    case 'github':
    case 'hmac-sha256':
    case 'jira':
      return { [header]: `sha256=${mac('').toString('hex')}` };
    case 'sentry':
    case 'linear':
      return { [header]: mac('').toString('hex') };
    case 'shopify':
      return { [header]: mac('').toString('base64') };
    case 'typeform':
      return { [header]: `sha256=${mac('').toString('base64')}` };
    case 'intercom':
      return { [header]: `sha1=${mac('').toString('hex')}` };
    case 'pagerduty':
      return { [header]: `v1=${mac('').toString('hex')}` };
    case 'stripe':
    case 'calendly':
      return { [header]: `t=${t},v1=${mac(`${t}.`).toString('hex')}` };
    case 'paddle':
      return { [header]: `ts=${t};h1=${mac(`${t}:`).toString('hex')}` };
    case 'slack':
      return { [header]: `v0=${mac(`v0:${t}:`).toString('hex')}`, 'x-slack-request-timestamp': t };
    case 'zoom':
      return { [header]: `v0=${mac(`v0:${t}:`).toString('hex')}`, 'x-zm-request-timestamp': t };
    case 'standard-webhooks': {
      const id = opts.messageId ?? `msg_${randomUUID().replaceAll('-', '')}`;
      return { [header]: `v1,${mac(`${id}.${t}.`).toString('base64')}`, 'webhook-id': id, 'webhook-timestamp': t };
    }
  }
}
