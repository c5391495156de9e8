/**
 * The spec validators the channel stand-ins use: each accepts a request the
 * provider's published spec allows and rejects a misspelt field and a missing
 * required field, so a stand-in test can only pass on requests the real
 * service would take.
 */
import { describe, expect, it } from 'vitest';
import { fakeRequest } from '../helpers/provider-stub.ts';
import { discordSpec, mattermostSpec, msteamsSpec, signalSpec, slackSpec, telegramSpec, whatsappSpec } from '../helpers/provider-specs.ts';

const TG = '/bot123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw';

describe('telegram sendMessage', () => {
  const v = telegramSpec();
  const good = {
    chat_id: -1001234567890,
    text: '<b>hi</b>',
    parse_mode: 'HTML',
    link_preview_options: { is_disabled: true },
    message_thread_id: 7,
  };

  it('accepts a correct request (chat id as number or @name)', () => {
    expect(v(fakeRequest({ path: `${TG}/sendMessage`, json: good }))).toEqual([]);
    expect(v(fakeRequest({ path: `${TG}/sendMessage`, json: { chat_id: '@channel', text: 'x' } }))).toEqual([]);
  });
  it('rejects a misspelt field, also inside a nested object', () => {
    expect(v(fakeRequest({ path: `${TG}/sendMessage`, json: { ...good, parse_mod: 'HTML' } })).join()).toMatch(/parse_mod/);
    expect(v(fakeRequest({ path: `${TG}/sendMessage`, json: { ...good, link_preview_options: { disabled: true } } })).join()).toMatch(
      /disabled/,
    );
  });
  it('rejects a missing required field and a wrong type', () => {
    expect(v(fakeRequest({ path: `${TG}/sendMessage`, json: { chat_id: 1 } })).join()).toMatch(/required property 'text'/);
    expect(v(fakeRequest({ path: `${TG}/sendMessage`, json: { chat_id: 1, text: 'x', message_thread_id: '7' } })).join()).toMatch(
      /integer/,
    );
  });
  it('rejects an unknown method and a path without a token, without echoing the token', () => {
    expect(v(fakeRequest({ path: `${TG}/sendMesage`, json: good })).join()).toMatch(/no method sendMesage/);
    const bad = v(fakeRequest({ path: '/botsecret-token/sendMessage', json: good })).join();
    expect(bad).toMatch(/not a Bot API path/);
    expect(bad).not.toContain('secret-token');
  });
  it('checks form bodies by names and required fields', () => {
    expect(v(fakeRequest({ path: `${TG}/sendMessage`, form: { chat_id: '1', text: 'x' } }))).toEqual([]);
    expect(v(fakeRequest({ path: `${TG}/sendMessage`, form: { chat_id: '1', txt: 'x' } })).join()).toMatch(/txt.*text|text/);
  });
});

describe('discord MessageCreateRequest', () => {
  const v = discordSpec();
  const path = '/api/v10/channels/123456789012345678/messages';
  const headers = { authorization: 'Bot abc.def' };
  const good = { content: 'hi', allowed_mentions: { parse: [] }, nonce: '42', enforce_nonce: true };

  it('accepts a correct request', () => {
    expect(v(fakeRequest({ path, json: good, headers }))).toEqual([]);
  });
  it('rejects a misspelt field, a nested one, a wrong enum and a missing token', () => {
    expect(v(fakeRequest({ path, json: { ...good, contnet: 'x' }, headers })).join()).toMatch(/contnet/);
    expect(v(fakeRequest({ path, json: { ...good, allowed_mentions: { pars: [] } }, headers })).join()).toMatch(/pars/);
    expect(v(fakeRequest({ path, json: { ...good, allowed_mentions: { parse: ['everybody'] } }, headers })).join()).toMatch(
      /allowed_mentions\/parse\/0/,
    );
    expect(v(fakeRequest({ path, json: good })).join()).toMatch(/credentials/);
  });
  it('rejects a path or method the spec does not have', () => {
    expect(v(fakeRequest({ path: '/api/v10/channel/1/messages', json: good, headers })).join()).toMatch(/no path/);
    expect(v(fakeRequest({ method: 'PUT', path, json: good, headers })).join()).toMatch(/no PUT/);
  });
});

describe('slack', () => {
  const v = slackSpec();
  const headers = { authorization: 'Bearer xoxb-1' };

  it('accepts chat.postMessage as JSON and as a form', () => {
    expect(
      v(
        fakeRequest({
          path: '/api/chat.postMessage',
          json: { channel: 'C1', text: 'hi', unfurl_links: false, unfurl_media: false },
          headers,
        }),
      ),
    ).toEqual([]);
    expect(v(fakeRequest({ path: '/api/chat.postMessage', form: { channel: 'C1', text: 'hi', unfurl_links: 'false' }, headers }))).toEqual(
      [],
    );
  });
  it('rejects a misspelt parameter, a missing channel, a missing token and a wrong type', () => {
    expect(v(fakeRequest({ path: '/api/chat.postMessage', json: { channel: 'C1', txt: 'hi' }, headers })).join()).toMatch(
      /body\/txt is not a field in the spec/,
    );
    expect(v(fakeRequest({ path: '/api/chat.postMessage', json: { text: 'hi' }, headers })).join()).toMatch(/"channel" is required/);
    expect(v(fakeRequest({ path: '/api/chat.postMessage', json: { channel: 'C1', text: 'hi' } })).join()).toMatch(/"token" is required/);
    expect(
      v(fakeRequest({ path: '/api/chat.postMessage', json: { channel: 'C1', text: 'hi', unfurl_links: 'no' }, headers })).join(),
    ).toMatch(/boolean/);
  });
  it('wants some content in chat.postMessage', () => {
    expect(v(fakeRequest({ path: '/api/chat.postMessage', json: { channel: 'C1' }, headers })).join()).toMatch(/one of text/);
  });
  it('waives a field the caller allows, and only that finding', () => {
    const lenient = slackSpec({ allowFields: ['body/markdown_text'] });
    expect(
      lenient(fakeRequest({ path: '/api/chat.postMessage', json: { channel: 'C1', text: 'x', markdown_text: '**x**' }, headers })),
    ).toEqual([]);
    expect(
      lenient(fakeRequest({ path: '/api/chat.postMessage', json: { channel: 'C1', text: 'x', markdown_txt: '**x**' }, headers })).join(),
    ).toMatch(/markdown_txt/);
  });

  it('accepts conversations.open with users and rejects a misspelt one', () => {
    expect(v(fakeRequest({ path: '/api/conversations.open', json: { users: 'U123' }, headers }))).toEqual([]);
    expect(v(fakeRequest({ path: '/api/conversations.open', json: { user: 'U123' }, headers })).join()).toMatch(
      /body\/user is not a field in the spec/,
    );
  });
});

describe('mattermost CreatePost', () => {
  const v = mattermostSpec();
  const headers = { authorization: 'Bearer abc' };

  it('accepts a correct request', () => {
    expect(v(fakeRequest({ path: '/api/v4/posts', json: { channel_id: 'c1', message: 'hi', root_id: 'p1' }, headers }))).toEqual([]);
  });
  it('takes pending_post_id, which the server reads though CreatePost leaves it out', () => {
    expect(v(fakeRequest({ path: '/api/v4/posts', json: { channel_id: 'c1', message: 'hi', pending_post_id: 'u1:1' }, headers }))).toEqual(
      [],
    );
    expect(
      mattermostSpec({ allowFields: [] })(
        fakeRequest({ path: '/api/v4/posts', json: { channel_id: 'c1', message: 'hi', pending_post_id: 'u1:1' }, headers }),
      ).join(),
    ).toMatch(/pending_post_id is not a field/);
  });

  it('rejects a misspelt field, a missing required field, no token and an unknown query parameter', () => {
    expect(v(fakeRequest({ path: '/api/v4/posts', json: { channel_id: 'c1', message: 'hi', rootid: 'p' }, headers })).join()).toMatch(
      /rootid/,
    );
    expect(v(fakeRequest({ path: '/api/v4/posts', json: { channel_id: 'c1' }, headers })).join()).toMatch(/required property 'message'/);
    expect(v(fakeRequest({ path: '/api/v4/posts', json: { channel_id: 'c1', message: 'hi' } })).join()).toMatch(/credentials/);
    expect(v(fakeRequest({ path: '/api/v4/posts?online=1', json: { channel_id: 'c1', message: 'hi' }, headers })).join()).toMatch(
      /"online"/,
    );
  });
});

describe('msteams Activity', () => {
  const v = msteamsSpec();
  const path = '/v3/conversations/a%3A1xyz/activities';
  const headers = { authorization: 'Bearer eyJ' };
  const good = { type: 'message', text: 'hi', textFormat: 'markdown' };

  it('accepts a correct request', () => {
    expect(v(fakeRequest({ path, json: good, headers }))).toEqual([]);
  });
  it('rejects a misspelt field, a wrong type and a missing body', () => {
    expect(v(fakeRequest({ path, json: { ...good, txt: 'hi' }, headers })).join()).toMatch(/txt/);
    expect(v(fakeRequest({ path, json: { ...good, from: { id: '1', nam: 'x' } }, headers })).join()).toMatch(
      /body\/from\/nam is not a field/,
    );
    expect(v(fakeRequest({ path, json: { ...good, text: 5 }, headers })).join()).toMatch(/string/);
    expect(v(fakeRequest({ path, headers })).join()).toMatch(/body is required/);
  });
});

describe('whatsapp Message', () => {
  const v = whatsappSpec();
  const path = '/v23.0/1234567890/messages';
  const headers = { authorization: 'Bearer EAAB123' };
  const good = {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: '+15551234567',
    type: 'text',
    text: { body: 'hi', preview_url: false },
  };

  it('accepts a correct text message (the allOf fix lets the base fields through)', () => {
    expect(v(fakeRequest({ path, json: good, headers }))).toEqual([]);
  });
  it('rejects a misspelt field, a missing required field and a missing token', () => {
    expect(v(fakeRequest({ path, json: { ...good, text: { txt: 'hi' } }, headers })).join()).toMatch(/"additionalProperty":"txt"/);
    expect(v(fakeRequest({ path, json: { ...good, extra: 1 }, headers })).join()).toMatch(/"unevaluatedProperty":"extra"/);
    const { messaging_product: _, ...noProduct } = good;
    expect(v(fakeRequest({ path, json: noProduct, headers })).join()).toMatch(/required property 'messaging_product'/);
    expect(v(fakeRequest({ path, json: good })).join()).toMatch(/Authorization/);
  });
});

describe('signal-cli-rest-api /v2/send', () => {
  const v = signalSpec();
  const good = { message: 'hi', number: '+15550000000', recipients: ['+15551234567'], text_mode: 'normal' };

  it('accepts a correct request', () => {
    expect(v(fakeRequest({ path: '/v2/send', json: good }))).toEqual([]);
  });
  it('rejects a misspelt field, a missing required field and a wrong enum', () => {
    expect(v(fakeRequest({ path: '/v2/send', json: { ...good, recipient: ['+1'] } })).join()).toMatch(/recipient/);
    const { number: _, ...noNumber } = good;
    expect(v(fakeRequest({ path: '/v2/send', json: noNumber })).join()).toMatch(/required property 'number'/);
    expect(v(fakeRequest({ path: '/v2/send', json: { ...good, text_mode: 'rich' } })).join()).toMatch(/allowed values/);
  });
});
