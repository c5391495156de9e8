/**
 * Config of the `gateway` provider: another gateway's hooks, which carry the
 * run out and deliver its reply themselves (docs/integrations.md).
 */
import { Type, type Static } from 'hook-intake/plugin';

export const GatewayConfig = Type.Object(
  {
    type: Type.Literal('gateway'),
    url: Type.String({
      minLength: 1,
      description: "the other gateway's hooks base, such as https://gw.example/hooks; /agent and /wake are appended",
    }),
    token: Type.String({
      minLength: 1,
      description: 'its hooks token, sent as Authorization: Bearer; use ${ENV} or {file} rather than writing it in the file',
    }),
    sessionKey: Type.Boolean({
      default: true,
      description: "send the run's session key (false for a gateway that refuses session keys in requests)",
    }),
    channel: Type.Optional(
      Type.String({ minLength: 1, description: 'the channel the other gateway delivers to, in its own names; absent: its default' }),
    ),
    to: Type.Optional(Type.String({ minLength: 1, description: 'the recipient on that channel' })),
    maxRetries: Type.Integer({
      default: 2,
      minimum: 0,
      maximum: 10,
      description: 'how many times a 408, 429, 5xx or network failure is tried again within the run',
    }),
    requestTimeoutMs: Type.Integer({
      default: 30_000,
      minimum: 100,
      description: 'an attempt not answered within it counts as a network failure',
    }),
  },
  { additionalProperties: false },
);

export type GatewayConfigValue = Static<typeof GatewayConfig>;
