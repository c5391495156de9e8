/**
 * The `slack` preset's messages (docs/presets/slack.md): one per common Events API event — what
 * happened, who, in which channel, the text — and a summary for the others. One session per thread
 * of a channel (a message that starts none starts its own, so replies to it join it), per direct
 * message conversation, and per channel for channel events. The app's own messages run nothing:
 * an agent that answers in Slack would otherwise be woken by its own answer.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { block, lines, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const words = (s: string): string => s.replace(/_/g, ' ');

interface Said {
  text: string;
  key?: string;
}

/** What a message needs to know about its delivery: the workspace and the app it was sent to. */
interface Envelope {
  team: string;
  app: string;
}

export default function slack(ctx: TransformContext<Obj>): TransformResult {
  const p = obj(ctx.payload);
  const e = obj(p.event);
  // `app_rate_limited` and other envelope-only callbacks carry their type at the top, not in `event`
  const type = ctx.event || str(p.type);
  if (fromThisApp(p, e)) return null;
  const env: Envelope = { team: str(p.team_id) || str(e.team), app: str(p.api_app_id) };
  const said = (MESSAGES[type] ?? generic)(e, env, type);
  return result(ctx, said.text, said.key ?? sessionKey('hook:slack', env.team, channelOf(e) || 'workspace'));
}

/**
 * True for the app's own messages (its bot user, or a message posted by the app), edits of them
 * included: the ones an agent answering in Slack would otherwise receive back as new work.
 */
function fromThisApp(p: Obj, e: Obj): boolean {
  const app = str(p.api_app_id);
  const inner = obj(e.message);
  const apps = [e.app_id, obj(e.bot_profile).app_id, inner.app_id, obj(inner.bot_profile).app_id].map(str);
  if (app && apps.includes(app)) return true;
  const bots = (Array.isArray(p.authorizations) ? p.authorizations.map(obj) : [])
    .filter((a) => a.is_bot === true)
    .map((a) => str(a.user_id));
  const user = str(e.user) || str(inner.user);
  return user !== '' && bots.includes(user);
}

const channelOf = (e: Obj): string =>
  str(e.channel) || str(obj(e.channel).id) || str(e.channel_id) || str(obj(e.item).channel) || str(obj(e.assistant_thread).channel_id);

const isDirect = (e: Obj, channel: string): boolean => str(e.channel_type) === 'im' || channel.startsWith('D');

/** Where something happened, as a reader (and an agent answering in Slack) needs it: ` in channel C…`, or nothing. */
function where(e: Obj, channel: string): string {
  if (!channel) return '';
  return isDirect(e, channel) ? ` in a direct message (${channel})` : ` in channel ${channel}`;
}

/** A link that opens the channel in Slack (Slack's documented deep link). */
function channelLink(env: Envelope, channel: string): string {
  if (!channel) return '';
  return `https://slack.com/app_redirect?channel=${encodeURIComponent(channel)}${env.team ? `&team=${encodeURIComponent(env.team)}` : ''}`;
}

/** The session of a message: its thread in a channel (a top-level message starts one), the conversation in a DM. */
function threadKey(env: Envelope, e: Obj, channel: string, ts: string): string {
  if (isDirect(e, channel)) return sessionKey('hook:slack', env.team, channel);
  return sessionKey('hook:slack', env.team, channel, ts || 'channel');
}

/** Who sent a message: the user's id, or the bot's name. */
function sender(e: Obj): string {
  if (str(e.user)) return str(e.user);
  const name = str(e.username) || str(obj(e.bot_profile).name);
  return name ? `bot ${oneLine(name, 80)}${str(e.bot_id) ? ` (${str(e.bot_id)})` : ''}` : str(e.bot_id) || 'someone';
}

type Message = (e: Obj, env: Envelope, type: string) => Said;

const message: Message = (e, env) => {
  const channel = channelOf(e);
  const subtype = str(e.subtype);
  const edited = subtype === 'message_changed';
  const m = edited ? obj(e.message) : e;
  const thread = str(m.thread_ts) || str(m.ts) || str(e.ts);
  const inThread = str(m.thread_ts) && str(m.thread_ts) !== str(m.ts) ? ` (thread ${str(m.thread_ts)})` : '';
  const files = (Array.isArray(m.files) ? m.files.map(obj) : []).map((f) => oneLine(f.name || f.title, 80)).filter(Boolean);
  let head: string;
  if (edited) head = `${sender(m)} edited a message${where(e, channel)}${inThread}:`;
  else if (subtype === 'message_deleted') head = `A message was deleted${where(e, channel)} (ts ${str(e.deleted_ts)})`;
  else if (!subtype || subtype === 'thread_broadcast' || subtype === 'file_share' || subtype === 'bot_message' || subtype === 'me_message')
    head = `Slack message from ${sender(m)}${where(e, channel)}${inThread}:`;
  else head = `Slack message (${words(subtype)}) from ${sender(m)}${where(e, channel)}:`;
  return {
    text: lines(
      head,
      subtype !== 'message_deleted' && block(m.text),
      files.length > 0 && `Files: ${files.join(', ')}`,
      channelLink(env, channel),
    ),
    key: threadKey(env, e, channel, thread),
  };
};

const mention: Message = (e, env) => {
  const channel = channelOf(e);
  const inThread = str(e.thread_ts) ? ` (thread ${str(e.thread_ts)})` : '';
  return {
    text: lines(`${sender(e)} mentioned the app${where(e, channel)}${inThread}:`, block(e.text), channelLink(env, channel)),
    key: threadKey(env, e, channel, str(e.thread_ts) || str(e.ts)),
  };
};

const reaction: Message = (e, env, type) => {
  const item = obj(e.item);
  const channel = channelOf(e);
  const what = str(item.type) === 'message' || !str(item.type) ? 'a message' : `a ${words(str(item.type))}`;
  const of = str(e.item_user) ? ` by ${str(e.item_user)}` : '';
  const verb = type === 'reaction_added' ? 'reacted' : 'removed the reaction';
  return {
    text: lines(
      `${str(e.user) || 'someone'} ${verb} :${oneLine(e.reaction, 80)}: ${type === 'reaction_added' ? 'to' : 'from'} ${what}${of}${where(item, channel)} (ts ${str(item.ts)})`,
      channelLink(env, channel),
    ),
    key: channel ? threadKey(env, item, channel, str(item.ts)) : undefined,
  };
};

const member: Message = (e, env, type) => {
  const channel = channelOf(e);
  const inviter = str(e.inviter) ? ` (invited by ${str(e.inviter)})` : '';
  return {
    text: lines(
      `${str(e.user) || 'someone'} ${type === 'member_joined_channel' ? 'joined' : 'left'}${channel ? ` channel ${channel}` : ' a channel'}${type === 'member_joined_channel' ? inviter : ''}`,
      channelLink(env, channel),
    ),
  };
};

/** A channel created, renamed, archived, unarchived or deleted. */
const CHANNEL_VERBS: Record<string, string> = {
  channel_created: 'created',
  channel_rename: 'renamed',
  channel_archive: 'archived',
  channel_unarchive: 'unarchived',
  channel_deleted: 'deleted',
};
const channelEvent: Message = (e, env, type) => {
  const c = obj(e.channel);
  const id = channelOf(e);
  const name = str(c.name) ? ` #${oneLine(c.name, 80)}` : '';
  const by = str(c.creator) || str(e.user);
  return { text: lines(`Channel ${id}${name} ${CHANNEL_VERBS[type] ?? words(type)}${by ? ` by ${by}` : ''}`, channelLink(env, id)) };
};

const teamJoin: Message = (e) => {
  const u = obj(e.user);
  const name = oneLine(u.real_name || obj(u.profile).real_name || u.name, 80);
  return { text: `${name || 'Someone'}${str(u.id) ? ` (${str(u.id)})` : ''} joined the workspace` };
};

const homeOpened: Message = (e, env) => ({
  text: `${str(e.user) || 'someone'} opened the app's ${oneLine(e.tab, 40) || 'home'} tab`,
  key: sessionKey('hook:slack', env.team, 'home', str(e.user)),
});

const linkShared: Message = (e, env) => {
  const channel = channelOf(e);
  const urls = (Array.isArray(e.links) ? e.links.map(obj) : []).map((l) => oneLine(l.url, 300)).filter(Boolean);
  return {
    text: lines(
      `${str(e.user) || 'someone'} shared ${urls.length === 1 ? 'a link' : `${urls.length} links`}${where(e, channel)}:`,
      ...urls,
    ),
    key: channel ? threadKey(env, e, channel, str(e.thread_ts) || str(e.message_ts)) : undefined,
  };
};

const assistantThread: Message = (e, env) => {
  const t = obj(e.assistant_thread);
  const channel = str(t.channel_id);
  return {
    text: `${str(t.user_id) || 'someone'} started a conversation with the assistant${where(e, channel)} (thread ${str(t.thread_ts)})`,
    key: sessionKey('hook:slack', env.team, channel, str(t.thread_ts)),
  };
};

/** An event without a message of its own: its type, where and who, and a summary of its fields. */
const generic: Message = (e, _env, type) => {
  const channel = channelOf(e);
  const who = str(e.user) || str(obj(e.user).id) || str(e.user_id);
  const { type: _t, event_ts: _ts, ...rest } = e;
  return {
    text: lines(`Slack event "${oneLine(type, 60) || 'unnamed'}"${where(e, channel)}${who ? ` by ${who}` : ''}`, summarize(rest)),
  };
};

const MESSAGES: Record<string, Message> = {
  message,
  app_mention: mention,
  reaction_added: reaction,
  reaction_removed: reaction,
  member_joined_channel: member,
  member_left_channel: member,
  channel_created: channelEvent,
  channel_rename: channelEvent,
  channel_archive: channelEvent,
  channel_unarchive: channelEvent,
  channel_deleted: channelEvent,
  team_join: teamJoin,
  app_home_opened: homeOpened,
  link_shared: linkShared,
  assistant_thread_started: assistantThread,
};
