/**
 * The eight chat channels as data, for tests that drive all of them through
 * the running service: for each, its config (pointed at a stand-in), the
 * validator of its provider's published spec (or of the server's own route
 * where none is published), where a request names its recipient and text,
 * and the provider's own answers for "sent", "rate limited" (with a hint of
 * one second, in the provider's form) and a permanent refusal, with the
 * reason the delivery should then carry.
 */
import { randomBytes } from 'node:crypto';
import { DISCORD, IMESSAGE, MATTERMOST, MSTEAMS, SIGNAL, SLACK, TELEGRAM, WHATSAPP, type ServiceLimit } from 'hook-intake/plugin';
import { DISCORD_MAX_LINES } from '../../plugins/discord/channel.ts';
import { blueBubblesCheck, clientCredentialsCheck, signalRpcCheck } from './provider-checks.ts';
import { discordSpec, mattermostSpec, msteamsSpec, slackSpec, telegramSpec, whatsappSpec } from './provider-specs.ts';
import type { Answer, StubRequest, Validate } from './provider-stub.ts';

/** The scripted cases, each with its own recipient so the stand-in can tell them apart. */
export type Case = 'short' | 'long' | 'limited' | 'refused';

export interface StandIn {
  /** The channel's name in the config, which is also its type. */
  name: string;
  validate: Validate;
  to: Record<Case, string>;
  /** The `to` a message request is for; undefined for a request that is not a message (Teams' token). */
  recipientOf(req: StubRequest): string | undefined;
  /** The text a message request carries. */
  textOf(req: StubRequest): string;
  /** SHORT_REPLY as the channel renders it. */
  short: string;
  sent(req: StubRequest): Answer;
  /** The answer to a request that is not a message. */
  other?(req: StubRequest): Answer;
  /** A rate limit with a hint of one second. */
  rateLimited(req: StubRequest): Answer;
  refused(req: StubRequest): Answer;
  /** The delivery's reason after `refused`. */
  reason: string;
  /** The service's limit on one message, in its unit. */
  limit: ServiceLimit;
  /** The most lines a message may have, where the channel has such a limit. */
  maxLines?: number;
  /** Secrets by the name of the environment variable the service's config reads them from. */
  secrets: Record<string, string>;
  /** The channel's config; `s` holds each secret as a value or as `${ENV}`. */
  config(url: string, s: Record<string, string>): Record<string, unknown>;
}

const random = (n: number) => randomBytes(n).toString('base64url');
const alnum = (n: number) => randomBytes(n).toString('hex').slice(0, n);
const four = <T>(f: (i: number) => T): Record<Case, T> => ({ short: f(1), long: f(2), limited: f(3), refused: f(4) });
const HINT = '1';

/** The text of the short reply: Markdown, raw HTML, an ampersand in a link and mass mentions. */
export const SHORT_REPLY = '**Done**: see [the report](https://example.com/r?a=1&b=2) & <b>x</b>, @everyone @channel';

const telegram: StandIn = {
  name: 'telegram',
  validate: telegramSpec(),
  to: four((i) => `200${i}`),
  recipientOf: (req) => String(req.body?.chat_id),
  textOf: (req) => req.body.text,
  short: '<b>Done</b>: see <a href="https://example.com/r?a=1&amp;b=2">the report</a> &amp; &lt;b&gt;x&lt;/b&gt;, @everyone @channel',
  sent: (req) => ({
    status: 200,
    json: { ok: true, result: { message_id: 1, date: 0, chat: { id: req.body.chat_id, type: 'private' }, text: 'x' } },
  }),
  rateLimited: () => ({
    status: 429,
    json: { ok: false, error_code: 429, description: `Too Many Requests: retry after ${HINT}`, parameters: { retry_after: Number(HINT) } },
  }),
  refused: () => ({ status: 400, json: { ok: false, error_code: 400, description: 'Bad Request: chat not found' } }),
  reason: 'Telegram 400: Bad Request: chat not found',
  limit: TELEGRAM,
  secrets: { E2E_TELEGRAM_TOKEN: `123456789:${random(30)}` },
  config: (url, s) => ({ type: 'telegram', botToken: s.E2E_TELEGRAM_TOKEN, apiBaseUrl: url }),
};

const WINDOW_DETAILS = 'Message failed to send because more than 24 hours have passed since the customer last replied to this number.';
const whatsapp: StandIn = {
  name: 'whatsapp',
  validate: whatsappSpec(),
  to: four((i) => `+1555000100${i}`),
  recipientOf: (req) => req.body?.to,
  textOf: (req) => req.body.text.body,
  short: '*Done*: see the report (https://example.com/r?a=1&b=2) & <b>x</b>, @everyone @channel',
  sent: (req) => ({
    status: 200,
    json: { messaging_product: 'whatsapp', contacts: [{ input: req.body.to, wa_id: req.body.to.slice(1) }], messages: [{ id: 'wamid.X' }] },
  }),
  rateLimited: () => ({
    status: 429,
    json: { error: { message: 'Rate limit hit', type: 'OAuthException', code: 130429, fbtrace_id: 'A1' } },
    headers: { 'retry-after': HINT },
  }),
  refused: () => ({
    status: 400,
    json: {
      error: {
        message: 'Re-engagement message',
        type: 'OAuthException',
        code: 131047,
        error_data: { details: WINDOW_DETAILS },
        fbtrace_id: 'A2',
      },
    },
  }),
  reason: `WhatsApp 131047: outside the 24-hour customer service window, so only template messages can reach this person (Re-engagement message: ${WINDOW_DETAILS})`,
  limit: WHATSAPP,
  secrets: { E2E_WHATSAPP_TOKEN: `EAAG${random(40)}` },
  config: (url, s) => ({
    type: 'whatsapp',
    phoneNumberId: '106540352242922',
    accessToken: s.E2E_WHATSAPP_TOKEN,
    apiBaseUrl: `${url}/v23.0`,
  }),
};

const discord: StandIn = {
  name: 'discord',
  validate: discordSpec(),
  to: four((i) => `10000000000000200${i}`),
  recipientOf: (req) => /^\/api\/v10\/channels\/(\d+)\/messages$/.exec(req.path)?.[1],
  textOf: (req) => req.body.content,
  short: '**Done**: see [the report](https://example.com/r?a=1&b=2) & <b>x</b>, @\u200deveryone @channel',
  sent: (req) => ({
    status: 200,
    json: { id: '1111111111111111111', channel_id: req.path.split('/')[4], content: req.body.content, nonce: req.body.nonce },
  }),
  rateLimited: () => ({
    status: 429,
    json: { message: 'You are being rate limited.', retry_after: Number(HINT), global: false },
    headers: { 'retry-after': HINT },
  }),
  refused: () => ({ status: 403, json: { message: 'Missing Access', code: 50001 } }),
  reason: 'Discord error 50001 (HTTP 403): Missing Access',
  limit: DISCORD,
  maxLines: DISCORD_MAX_LINES,
  secrets: { E2E_DISCORD_TOKEN: `MTIz${random(20)}.${random(5)}.${random(27)}` },
  config: (url, s) => ({ type: 'discord', botToken: s.E2E_DISCORD_TOKEN, apiBaseUrl: `${url}/api/v10` }),
};

const slack: StandIn = {
  name: 'slack',
  validate: slackSpec(),
  to: four((i) => `C000000300${i}`),
  recipientOf: (req) => req.body?.channel,
  textOf: (req) => req.body.text,
  short: '*Done*: see <https://example.com/r?a=1&amp;b=2|the report> &amp; &lt;b&gt;x&lt;/b&gt;, @everyone @channel',
  sent: (req) => ({
    status: 200,
    json: {
      ok: true,
      channel: req.body.channel,
      ts: '1893456000.000100',
      message: { type: 'message', text: 'x', ts: '1893456000.000100' },
    },
  }),
  rateLimited: () => ({ status: 429, json: { ok: false, error: 'ratelimited' }, headers: { 'retry-after': HINT } }),
  refused: () => ({ status: 200, json: { ok: false, error: 'channel_not_found' } }),
  reason: 'Slack chat.postMessage: channel_not_found',
  limit: SLACK,
  secrets: { E2E_SLACK_TOKEN: `xoxb-${random(24)}` },
  config: (url, s) => ({ type: 'slack', botToken: s.E2E_SLACK_TOKEN, apiBaseUrl: `${url}/api` }),
};

const mattermost: StandIn = {
  name: 'mattermost',
  validate: mattermostSpec(),
  to: four((i) => `nhze199c4j87ped4wannrj400${i}`),
  recipientOf: (req) => req.body?.channel_id,
  textOf: (req) => req.body.message,
  short: '**Done**: see [the report](https://example.com/r?a=1&b=2) & <b>x</b>, @everyone @\u200dchannel',
  sent: (req) => ({
    status: 201,
    json: {
      id: 'a1b2c3d4e5f6g7h8i9j0k1l2m3',
      channel_id: req.body.channel_id,
      message: req.body.message,
      pending_post_id: req.body.pending_post_id,
    },
  }),
  // Mattermost's rate limiter answers in plain text, with its X-Ratelimit-* headers and Retry-After
  rateLimited: () => ({
    status: 429,
    text: 'limit exceeded\n',
    headers: { 'retry-after': HINT, 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': HINT },
  }),
  refused: () => ({
    status: 403,
    json: { id: 'api.context.permissions.app_error', message: 'You do not have the appropriate permissions.', status_code: 403 },
  }),
  reason: 'Mattermost HTTP 403 api.context.permissions.app_error: You do not have the appropriate permissions.',
  limit: MATTERMOST,
  secrets: { E2E_MATTERMOST_TOKEN: alnum(26) },
  config: (url, s) => ({ type: 'mattermost', url, token: s.E2E_MATTERMOST_TOKEN }),
};

const TEAMS_TOKEN_PATH = '/tenant/oauth2/v2.0/token';
const TEAMS_APP_ID = '00000000-1111-2222-3333-444444444444';
const teamsPassword = `${random(8)}~${random(24)}`;
/** The access token the stand-in grants; the service must keep it as secret as the password. */
export const TEAMS_ACCESS_TOKEN = `eyJ0eXAiOiJKV1Qi.${random(30)}.${random(20)}`;
const teamsConnector = msteamsSpec({ prefix: '/teams' });
const teamsGrant = clientCredentialsCheck(TEAMS_APP_ID, teamsPassword);
const msteams: StandIn = {
  name: 'msteams',
  validate: (req) => (req.path === TEAMS_TOKEN_PATH ? teamsGrant(req) : teamsConnector(req)),
  to: four((i) => `19:case500${i}@thread.tacv2`),
  recipientOf: (req) => {
    const m = /^\/teams\/v3\/conversations\/([^/]+)\/activities$/.exec(req.path);
    return m ? decodeURIComponent(m[1]!) : undefined;
  },
  textOf: (req) => req.body.text,
  short: '**Done**: see [the report](https://example.com/r?a=1&amp;b=2) &amp; &lt;b>x&lt;/b>, @everyone @channel',
  sent: () => ({ status: 201, json: { id: '1731234567890' } }),
  other: () => ({ status: 200, json: { token_type: 'Bearer', expires_in: 3599, access_token: TEAMS_ACCESS_TOKEN } }),
  rateLimited: () => ({
    status: 429,
    json: { error: { code: 'Throttled', message: 'The request was throttled.' } },
    headers: { 'retry-after': HINT },
  }),
  refused: () => ({ status: 404, json: { error: { code: 'ConversationNotFound', message: 'Conversation not found.' } } }),
  reason: 'HTTP 404 ConversationNotFound: Conversation not found.',
  limit: MSTEAMS,
  secrets: { E2E_TEAMS_PASSWORD: teamsPassword },
  config: (url, s) => ({
    type: 'msteams',
    appId: TEAMS_APP_ID,
    appPassword: s.E2E_TEAMS_PASSWORD,
    serviceUrl: `${url}/teams/`,
    tokenUrl: `${url}${TEAMS_TOKEN_PATH}`,
  }),
};

const rpc = (req: StubRequest, body: Record<string, unknown>): Answer => ({
  status: 200,
  json: { jsonrpc: '2.0', ...body, id: req.body?.id },
});
const signal: StandIn = {
  name: 'signal',
  validate: signalRpcCheck,
  to: four((i) => `+1555000600${i}`),
  recipientOf: (req) => req.body?.params?.recipient?.[0],
  textOf: (req) => req.body.params.message,
  short: 'Done: see the report (https://example.com/r?a=1&b=2) & <b>x</b>, @everyone @channel',
  sent: (req) =>
    rpc(req, {
      result: { timestamp: 1731234567890, results: [{ recipientAddress: { number: req.body.params.recipient[0] }, type: 'SUCCESS' }] },
    }),
  // signal-cli answers every call with HTTP 200; a failure is a JSON-RPC error object with signal-cli's code and
  // the result for each recipient
  rateLimited: (req) =>
    rpc(req, {
      error: {
        code: -5,
        message: 'Failed to send message due to rate limiting',
        data: {
          response: {
            timestamp: 1,
            results: [
              { recipientAddress: { number: req.body.params.recipient[0] }, type: 'RATE_LIMIT_FAILURE', retryAfterSeconds: Number(HINT) },
            ],
          },
        },
      },
    }),
  refused: (req) =>
    rpc(req, {
      error: {
        code: -1,
        message: 'Failed to send message',
        data: {
          response: {
            timestamp: 1,
            results: [{ recipientAddress: { number: req.body.params.recipient[0] }, type: 'UNREGISTERED_FAILURE' }],
          },
        },
      },
    }),
  reason: 'signal-cli error -1: Failed to send message (UNREGISTERED_FAILURE)',
  limit: SIGNAL,
  secrets: {},
  config: (url) => ({ type: 'signal', url, account: '+15550001111' }),
};

const badRequest = (error: string): Answer => ({
  status: 400,
  json: {
    status: 400,
    message: "You've made a bad request! Please check your request params & body",
    error: { type: 'Validation Error', message: error },
  },
});
const imessagePassword = `bb-${random(16)}&=${random(4)}`;
const imessage: StandIn = {
  name: 'imessage',
  validate: blueBubblesCheck(imessagePassword),
  to: four((i) => `+1555000700${i}`),
  recipientOf: (req) => String(req.body?.chatGuid).replace(/^iMessage;-;/, ''),
  textOf: (req) => req.body.message,
  short: 'Done: see the report (https://example.com/r?a=1&b=2) & <b>x</b>, @everyone @channel',
  sent: (req) => ({
    status: 200,
    json: {
      status: 200,
      message: 'Message sent!',
      data: { guid: 'p:0/5E1A', tempGuid: req.body.tempGuid, text: req.body.message, error: 0 },
    },
  }),
  rateLimited: () => ({ status: 429, text: 'Too Many Requests', headers: { 'retry-after': HINT } }),
  refused: () => badRequest('Chat does not exist'),
  reason: "HTTP 400: You've made a bad request! Please check your request params & body: Chat does not exist",
  limit: IMESSAGE,
  secrets: { E2E_IMESSAGE_PASSWORD: imessagePassword },
  config: (url, s) => ({ type: 'imessage', url, password: s.E2E_IMESSAGE_PASSWORD }),
};

export const STAND_INS: StandIn[] = [telegram, whatsapp, discord, slack, mattermost, msteams, signal, imessage];

/** The stand-in's script: the `limited` recipient is rate limited once, the `refused` one always refused, the rest sent. */
export function scriptOf(s: StandIn): (req: StubRequest) => Answer {
  let limited = 0;
  return (req) => {
    const to = s.recipientOf(req);
    if (to === undefined) return s.other ? s.other(req) : { status: 404, json: { error: 'not a message request' } };
    if (to === s.to.refused) return s.refused(req);
    if (to === s.to.limited && limited++ === 0) return s.rateLimited(req);
    return s.sent(req);
  };
}
