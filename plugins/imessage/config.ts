/**
 * Config of the `imessage` channel: replies go out through a BlueBubbles
 * server running on a Mac signed in to iMessage.
 */
import { IMESSAGE, Type, type Static } from 'hook-intake/plugin';

export const IMessageConfig = Type.Object(
  {
    type: Type.Optional(Type.Literal('imessage')),
    url: Type.String({ minLength: 1, description: 'base URL of the BlueBubbles server (http://mac.local:1234)' }),
    password: Type.String({ minLength: 1, description: 'the BlueBubbles server password; use ${ENV} or {file}' }),
    method: Type.Union([Type.Literal('apple-script'), Type.Literal('private-api')], {
      default: 'apple-script',
      description: 'how BlueBubbles sends: apple-script (default) or private-api (needs its Private API helper)',
    }),
    timeoutMs: Type.Integer({ default: 30_000, minimum: 1, maximum: 600_000 }),
    textChunkLimit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: IMESSAGE.limit, description: 'split replies into parts of at most this many characters' }),
    ),
  },
  { additionalProperties: false },
);

export type IMessageConfigValue = Static<typeof IMessageConfig>;
