/**
 * Telegram bot updates → an agent run whose reply goes back to the same chat.
 *
 * Mapping (the bot's webhook, set with setWebhook{url, secret_token}, posts to
 * /hooks/telegram), with a `telegram` channel configured for the replies:
 *
 *   { id: 'telegram', match: { path: 'telegram' }, name: 'Telegram',
 *     verify: { type: 'telegram', secret: '${TELEGRAM_WEBHOOK_SECRET}' },
 *     transform: { module: 'telegram.ts' } }
 *
 * - a message with text (or a photo or file with a caption): an agent run in
 *   one session per chat (per topic in a forum group), so the conversation
 *   continues, delivered to `telegram` with `to` the chat id (`<chat>:<topic>`
 *   in a topic);
 * - messages from bots (no reply loops), messages without text (stickers,
 *   joins, …) and every other update type: null, 204.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';

export interface TelegramUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  last_name?: string;
  username?: string;
}

export interface TelegramMessage {
  message_id: number;
  message_thread_id?: number;
  is_topic_message?: boolean;
  from?: TelegramUser;
  chat: { id: number; type: 'private' | 'group' | 'supergroup' | 'channel'; title?: string };
  text?: string;
  caption?: string;
}

export interface TelegramUpdate {
  update_id: number;
  message?: TelegramMessage;
}

export default function telegram(ctx: TransformContext<TelegramUpdate>): TransformResult {
  const m = ctx.payload.message;
  const text = m?.text ?? m?.caption;
  if (!m || !text || m.from?.is_bot) return null;
  // a reply in a forum topic must name the topic, or it lands in the General topic
  const where = m.is_topic_message && m.message_thread_id !== undefined ? `${m.chat.id}:${m.message_thread_id}` : String(m.chat.id);
  return {
    sessionKey: `hook:telegram:${where}`,
    message: `Telegram message from ${sender(m.from)}${m.chat.type === 'private' ? '' : ` in ${m.chat.title ?? 'a group'}`}:\n${text}`,
    deliver: true,
    channel: 'telegram',
    to: where,
  };
}

/** `Ana (@ana_ops)`, `Test Lastname (@Test)`, or `someone` for a message with no sender (an anonymous admin). */
export function sender(u: TelegramUser | undefined): string {
  if (!u) return 'someone';
  const name = [u.first_name, u.last_name].filter(Boolean).join(' ');
  return u.username ? `${name} (@${u.username})` : name;
}
