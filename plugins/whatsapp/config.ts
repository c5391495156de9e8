/** Config of the `whatsapp` channel: a WhatsApp Cloud API phone number and its access token. */
import { Type, type Static } from 'hook-intake/plugin';

export const WhatsAppConfig = Type.Object(
  {
    type: Type.Optional(Type.Literal('whatsapp')),
    phoneNumberId: Type.String({
      pattern: '^[0-9]{1,30}$',
      description: "the sending number's id in WhatsApp Manager (digits, not the phone number)",
    }),
    accessToken: Type.String({
      minLength: 1,
      description: 'a system user access token with whatsapp_business_messaging; use ${ENV} or {file}',
    }),
    apiBaseUrl: Type.String({ default: 'https://graph.facebook.com/v23.0', description: 'Graph API root including the version' }),
    timeoutMs: Type.Integer({ default: 10_000, minimum: 1, maximum: 600_000, description: 'how long to wait for an answer' }),
    textChunkLimit: Type.Optional(
      Type.Integer({ minimum: 1, description: 'split replies into parts of at most this many UTF-16 units (at most 4096)' }),
    ),
  },
  { additionalProperties: false },
);

export type WhatsAppConfigValue = Static<typeof WhatsAppConfig>;
