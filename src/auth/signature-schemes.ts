/**
 * The provider HMAC schemes by `verify.type` (docs/verifiers.md; SECURITY.md, "What a signature
 * secret grants"). Each is data: its header, key handling and how a request reads into the signed
 * bytes and candidate MACs (auth/schemes/). auth/verifiers.ts registers one verifier for each.
 */
import { github, hmacSha256, intercom, jira, linear, pagerduty, sentry, shopify, typeform } from './schemes/body.ts';
import type { Scheme } from './schemes/scheme.ts';
import { calendly, paddle, slack, standardWebhooks, stripe, zoom } from './schemes/timestamped.ts';

export { MAX_CANDIDATES, type Scheme, type SignatureFailure, type SignedParts } from './schemes/scheme.ts';

const table = {
  github,
  stripe,
  slack,
  'standard-webhooks': standardWebhooks,
  'hmac-sha256': hmacSha256,
  shopify,
  sentry,
  pagerduty,
  jira,
  typeform,
  intercom,
  linear,
  calendly,
  paddle,
  zoom,
} satisfies Record<string, Scheme>;

/** The HMAC `verify.type` values. */
export type SignatureType = keyof typeof table;

export const SCHEMES: Readonly<Record<SignatureType, Scheme>> = table;
