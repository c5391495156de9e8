/**
 * Config of the `webhook` channel: replies are POSTed as JSON to one URL,
 * optionally signed as Standard Webhooks sign.
 */
import { Type, type Static } from 'hook-intake/plugin';

export const HEADER_NAME = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";

export const WebhookConfig = Type.Object(
  {
    type: Type.Optional(Type.Literal('webhook')),
    url: Type.String({ minLength: 1, description: 'http:// or https:// URL that receives the POSTs' }),
    secret: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'signs deliveries as Standard Webhooks do: whsec_<base64>, or any other text used as its UTF-8 bytes; use ${ENV} or {file}',
      }),
    ),
    headers: Type.Optional(Type.Record(Type.String(), Type.String(), { propertyNames: { pattern: HEADER_NAME } })),
    timeoutMs: Type.Integer({ default: 10_000, minimum: 1, maximum: 600_000 }),
    maxTextLength: Type.Optional(
      Type.Integer({ minimum: 1, description: 'split longer replies into parts of at most this many characters' }),
    ),
    requiresTo: Type.Boolean({ default: false, description: 'skip deliveries that have no recipient' }),
  },
  { additionalProperties: false },
);

export type WebhookConfigValue = Static<typeof WebhookConfig>;
