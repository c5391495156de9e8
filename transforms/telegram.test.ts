/**
 * The Telegram example: a chat message becomes an agent run whose reply goes
 * back to the same chat (and topic); nothing else starts anything.
 */
import { describe, expect, it } from 'vitest';
import telegram, { sender, type TelegramUpdate } from './telegram.ts';
import { context, fixture } from '../test/helpers/transform-context.ts';

const run = (payload: TelegramUpdate) => telegram(context(payload, { path: 'telegram' }));
const load = (name: string) => fixture<TelegramUpdate>(`telegram-${name}.json`);

describe('transforms/telegram.ts', () => {
  it('turns a private message into an agent run delivered back to that chat, one session per chat', () => {
    expect(run(load('message-private'))).toEqual({
      sessionKey: 'hook:telegram:1111111',
      message: 'Telegram message from Test Lastname (@Test):\nWhat is on my calendar tomorrow?',
      deliver: true,
      channel: 'telegram',
      to: '1111111',
    });
  });

  it('replies into the same forum topic of a group, reading a caption as the text', () => {
    expect(run(load('message-topic'))).toEqual({
      sessionKey: 'hook:telegram:-1001234567890:42',
      message: 'Telegram message from Ana (@ana_ops) in Ops:\nThe deploy dashboard looks like this, is that normal?',
      deliver: true,
      channel: 'telegram',
      to: '-1001234567890:42',
    });
  });

  it('replies to the group itself for a reply thread that is not a forum topic', () => {
    const u = load('message-topic');
    delete u.message!.is_topic_message;
    expect(run(u)).toMatchObject({ to: '-1001234567890', sessionKey: 'hook:telegram:-1001234567890' });
  });

  it('skips messages without text, messages from bots and other update types', () => {
    expect(run(load('sticker'))).toBeNull();
    const fromBot = load('message-private');
    fromBot.message!.from!.is_bot = true;
    expect(run(fromBot)).toBeNull();
    expect(run({ update_id: 1, edited_channel_post: {} } as TelegramUpdate)).toBeNull();
  });

  it('names the sender as well as Telegram tells', () => {
    expect(sender({ id: 1, is_bot: false, first_name: 'Ana' })).toBe('Ana');
    expect(sender(undefined)).toBe('someone');
  });
});
