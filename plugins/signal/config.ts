/**
 * Config of the `signal` channel: replies go out through signal-cli's HTTP
 * daemon (JSON-RPC) or through signal-cli-rest-api, both run by the operator
 * next to a registered Signal account.
 */
import { SIGNAL, Type, type Static } from 'hook-intake/plugin';

export const SignalConfig = Type.Object(
  {
    type: Type.Optional(Type.Literal('signal')),
    url: Type.String({
      minLength: 1,
      default: 'http://127.0.0.1:8080',
      description: "base URL of signal-cli's HTTP daemon or of signal-cli-rest-api",
    }),
    account: Type.String({
      pattern: '^\\+[1-9][0-9]{6,14}$',
      description: 'the registered Signal number that sends, in E.164 form (+15551234567)',
    }),
    api: Type.Union([Type.Literal('jsonrpc'), Type.Literal('rest')], {
      default: 'jsonrpc',
      description: 'jsonrpc: signal-cli daemon --http (POST /api/v1/rpc); rest: signal-cli-rest-api (POST /v2/send)',
    }),
    timeoutMs: Type.Integer({ default: 60_000, minimum: 1, maximum: 600_000 }),
    textChunkLimit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: SIGNAL.limit, description: 'split replies into parts of at most this many UTF-8 bytes' }),
    ),
  },
  { additionalProperties: false },
);

export type SignalConfigValue = Static<typeof SignalConfig>;
