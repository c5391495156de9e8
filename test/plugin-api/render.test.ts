/**
 * Rendering the agent's Markdown for each chat service: what each service
 * shows, and that text in the reply can never become markup, a mass mention
 * or a link the agent did not write as one.
 */
import { describe, expect, it } from 'vitest';
import {
  disarmMentions,
  toDiscord,
  toMattermost,
  toPlainText,
  toSlackMrkdwn,
  toTeamsMarkdown,
  toTelegramHtml,
  toWhatsApp,
} from '../../src/plugin-api/render.ts';

const SAMPLE = [
  '# Title',
  '',
  'Some **bold**, *italic*, ~~gone~~ and `a < b` with [a link](https://example.com/?a=1&b="2").',
  '',
  '- one',
  '- two',
  '',
  '```ts',
  'if (a < b && c) {}',
  '```',
].join('\n');

describe('toTelegramHtml()', () => {
  it('renders the tags Telegram takes', () => {
    expect(toTelegramHtml(SAMPLE)).toBe(
      [
        '<b>Title</b>',
        '',
        'Some <b>bold</b>, <i>italic</i>, <s>gone</s> and <code>a &lt; b</code> with <a href="https://example.com/?a=1&amp;b=&quot;2&quot;">a link</a>.',
        '',
        '• one',
        '• two',
        '',
        '<pre><code class="language-ts">if (a &lt; b &amp;&amp; c) {}</code></pre>',
      ].join('\n'),
    );
  });
  it('shows raw HTML in the reply as text', () => {
    expect(toTelegramHtml('hi <b onclick="x">there</b> & <a href="https://evil">x</a>')).toBe(
      'hi &lt;b onclick="x"&gt;there&lt;/b&gt; &amp; &lt;a href="https://evil"&gt;x&lt;/a&gt;',
    );
    expect(toTelegramHtml('<script>\nalert(1)\n</script>')).toBe('&lt;script&gt;\nalert(1)\n&lt;/script&gt;');
  });
  it('does not link URLs with other schemes, and keeps quotes inside the attribute', () => {
    expect(toTelegramHtml('[x](javascript:alert(1))')).toBe('x (javascript:alert(1))');
    expect(toTelegramHtml('[x](https://a.b/"><b>)')).not.toMatch(/href="[^"]*"[^>]*"/);
  });
  it('drops a language name that is not a plain word', () => {
    expect(toTelegramHtml('```a"b\nx\n```')).toBe('<pre>x</pre>');
  });
});

describe('toSlackMrkdwn()', () => {
  it('renders mrkdwn', () => {
    expect(toSlackMrkdwn('**b** *i* ~~s~~ `c` [t](https://x.y/a|b)')).toBe('*b* _i_ ~s~ `c` <https://x.y/a%7Cb|t>');
  });
  it('keeps special mentions and links in the text literal', () => {
    const out = toSlackMrkdwn('Hey <!channel> <!here> <@U123> <#C1> & co');
    expect(out).toBe('Hey &lt;!channel&gt; &lt;!here&gt; &lt;@U123&gt; &lt;#C1&gt; &amp; co');
    expect(out).not.toMatch(/<[!@]/);
  });
  it('escapes inside code too', () => {
    expect(toSlackMrkdwn('```\n<!everyone>\n```')).toBe('```\n&lt;!everyone&gt;\n```');
  });
});

describe('toDiscord()', () => {
  it('keeps Markdown and disarms mass mentions with a zero-width joiner', () => {
    expect(toDiscord('**hi** @everyone and @here, not me@hereford')).toBe('**hi** @\u200deveryone and @\u200dhere, not me@hereford');
  });
  it('disarms other words when asked (Mattermost)', () => {
    expect(disarmMentions('@all @channel @here @alice', ['all', 'channel', 'here'])).toBe('@\u200dall @\u200dchannel @\u200dhere @alice');
  });
});

describe('toMattermost()', () => {
  it('keeps Markdown and disarms @channel, @all and @here outside code', () => {
    expect(toMattermost('**hi** @channel, @ALL and @here; not @alice or me@hereford')).toBe(
      '**hi** @\u200dchannel, @\u200dALL and @\u200dhere; not @alice or me@hereford',
    );
  });
  it('leaves code spans and code blocks as written (no invisible character copied with the code)', () => {
    const md = [
      'Run `notify @channel` now, @all.',
      '',
      '```sh',
      'echo @here @channel',
      '```',
      '',
      '- item',
      '  ```',
      '  @all',
      '  ```',
      '',
      '> quoted @here',
    ].join('\n');
    expect(toMattermost(md)).toBe(
      [
        'Run `notify @channel` now, @\u200dall.',
        '',
        '```sh',
        'echo @here @channel',
        '```',
        '',
        '- item',
        '  ```',
        '  @all',
        '  ```',
        '',
        '> quoted @\u200dhere',
      ].join('\n'),
    );
  });
});

describe('toTeamsMarkdown()', () => {
  it('writes & and < outside code as entities and keeps code as written', () => {
    expect(toTeamsMarkdown('a < b & <at>x</at> `a<b&c`\n\n```\n<b>&amp;\n```\n\n> quote')).toBe(
      'a &lt; b &amp; &lt;at>x&lt;/at> `a<b&c`\n\n```\n<b>&amp;\n```\n\n> quote',
    );
  });
});

describe('toWhatsApp()', () => {
  it('renders WhatsApp markup, links as text with the URL', () => {
    expect(toWhatsApp('# T\n\n**b** *i* ~~s~~ `c` [site](https://x.y)\n\n```\ncode\n```')).toBe(
      '*T*\n\n*b* _i_ ~s~ ```c``` site (https://x.y)\n\n```code```',
    );
  });
});

describe('toPlainText()', () => {
  it('removes markup and keeps link targets', () => {
    expect(toPlainText(SAMPLE)).toBe(
      [
        'Title',
        '',
        'Some bold, italic, gone and a < b with a link (https://example.com/?a=1&b="2").',
        '',
        '• one',
        '• two',
        '',
        'if (a < b && c) {}',
      ].join('\n'),
    );
    expect(toPlainText('<https://x.y> and [https://x.y](https://x.y)')).toBe('https://x.y and https://x.y');
  });
});
