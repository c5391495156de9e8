/**
 * The public plugin API, `hook-intake/plugin`: what a channel, an agent provider, a verifier or a
 * service needs, and all the built-in plugins under `plugins/` use. The names are listed one by one,
 * so that what is public is decided here; docs/plugins.md describes each group.
 */

// Defining a plugin: the contributions, their contexts and the two errors the service acts on.
export {
  ChannelError,
  definePlugin,
  PluginConfigError,
  Type,
  type AgentMessage,
  type AgentProvider,
  type AgentProviderFactory,
  type AgentReply,
  type AgentRequest,
  type AgentUsage,
  type Channel,
  type ChannelFactory,
  type ChannelLimits,
  type ChannelMessage,
  type DirectAnswer,
  type DispatchAnswer,
  type HandshakeOutcome,
  type HandshakeRequest,
  type HeaderBag,
  type Lifecycle,
  type MappingConfig,
  type Plugin,
  type PluginAction,
  type PluginContext,
  type PresetDefinition,
  type Service,
  type ServiceFactory,
  type StartContext,
  type Static,
  type Verifier,
  type VerifierFactory,
  type VerifyOutcome,
  type VerifyRequest,
} from '../plugins/define.ts';

// Talking HTTP: an answer read within a size, error answers as short reasons, secrets kept out, retry rules.
export {
  channelErrorForStatus,
  errorDetail,
  isRetryableStatus,
  networkReason,
  parseRetryAfter,
  readCapped,
  redact,
  shorten,
} from './http.ts';

// One request of a chat channel: deadline, shutdown, never-sent versus ambiguous failures, no redirects.
export { baseUrl, detailOf, discard, E164, post, readAnswer, request, shownUrl, type PostOptions } from './chat-request.ts';

// A reply's Markdown rendered for each chat service, and split into messages that fit its limit.
export { toDiscord, toMattermost, toPlainText, toSlackMrkdwn, toTeamsMarkdown, toTelegramHtml, toWhatsApp } from './render.ts';
export { renderParts, utf16Length, utf8Length, type RenderPartsOptions } from './split.ts';
export { chunkLimit, DISCORD, IMESSAGE, MATTERMOST, MSTEAMS, SIGNAL, SLACK, TELEGRAM, WHATSAPP, type ServiceLimit } from './limits.ts';

// What a channel sends as its User-Agent, and secrets written in base64.
export { USER_AGENT } from './user-agent.ts';
export { decodeBase64Strict } from './base64.ts';
