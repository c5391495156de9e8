/**
 * Config of the `msteams` channel: replies go to a Teams conversation through
 * the Bot Framework Connector, with a token from the bot's app registration
 * (client credentials).
 */
import { MSTEAMS, Type, type Static } from 'hook-intake/plugin';

export const MsTeamsConfig = Type.Object(
  {
    type: Type.Optional(Type.Literal('msteams')),
    appId: Type.String({ minLength: 1, description: "the bot's Microsoft App ID (client id of its app registration)" }),
    appPassword: Type.String({ minLength: 1, description: "a client secret of the bot's app registration; use ${ENV} or {file}" }),
    tenantId: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9.-]+$',
        description: 'the Entra tenant of the app registration (a GUID or domain); required unless tokenUrl is given',
      }),
    ),
    serviceUrl: Type.String({
      minLength: 1,
      default: 'https://smba.trafficmanager.net/teams/',
      description: 'the Bot Connector service URL of the conversations',
    }),
    tokenUrl: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'OAuth 2.0 token endpoint; default https://login.microsoftonline.com/<tenantId>/oauth2/v2.0/token',
      }),
    ),
    timeoutMs: Type.Integer({ default: 15_000, minimum: 1, maximum: 600_000 }),
    textChunkLimit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MSTEAMS.limit, description: 'split replies into parts of at most this many characters' }),
    ),
  },
  { additionalProperties: false },
);

export type MsTeamsConfigValue = Static<typeof MsTeamsConfig>;
