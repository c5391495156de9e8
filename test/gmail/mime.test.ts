/** Reading Gmail message parts: encoded words, charsets, quoted-printable, HTML as text, the byte cut. */
import { describe, expect, it } from 'vitest';
import { htmlToText } from '../../src/gmail/html-text.ts';
import { bodyText, cutToBytes, decodeEncodedWords, type MessagePart } from '../../src/gmail/mime.ts';

const part = (mimeType: string, data: Buffer, headers: Record<string, string> = {}): MessagePart => ({
  mimeType,
  filename: '',
  headers: Object.entries(headers).map(([name, value]) => ({ name, value })),
  body: { data: data.toString('base64url') },
});

describe('decodeEncodedWords()', () => {
  it.each([
    ['=?ISO-8859-1?Q?Caf=E9_cr=E8me?=', 'Café crème'],
    ['=?utf-8?b?w6lsw6h2ZQ==?=', 'élève'],
    ['=?UTF-8?Q?a?= =?UTF-8?Q?b?=', 'ab'],
    ['Re: =?windows-1252?Q?=93quoted=94?= text', 'Re: “quoted” text'],
    ['plain subject', 'plain subject'],
    ['=?x-unknown?Q?abc?=', '=?x-unknown?Q?abc?='],
  ])('%s → %s', (input, output) => expect(decodeEncodedWords(input)).toBe(output));
});

describe('bodyText()', () => {
  it('prefers text/plain in multipart/alternative and decodes its charset', () => {
    const msg: MessagePart = {
      mimeType: 'multipart/alternative',
      parts: [
        part('text/html', Buffer.from('<b>html</b>')),
        part('text/plain', Buffer.from('caf\xe9', 'latin1'), { 'Content-Type': 'text/plain; charset=ISO-8859-1' }),
      ],
    };
    expect(bodyText(msg)).toBe('café');
  });

  it('decodes a part still in quoted-printable, and leaves a decoded one with = signs alone', () => {
    const qp = { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Transfer-Encoding': 'quoted-printable' };
    expect(bodyText(part('text/plain', Buffer.from('caf=C3=A9 soft=\r\nbreak'), qp))).toBe('café softbreak');
    expect(bodyText(part('text/plain', Buffer.from('a = b, x=1'), qp))).toBe('a = b, x=1');
  });

  it('reads base64url data whose bytes need - and _', () => {
    const bytes = Buffer.from([0xfb, 0xff, 0xfe, 0x41]);
    expect(bytes.toString('base64url')).toMatch(/[-_]/);
    expect(bodyText(part('text/plain', bytes, { 'Content-Type': 'text/plain; charset=iso-8859-1' }))).toBe('ûÿþA');
  });

  it('turns an HTML-only body into text and skips attachments', () => {
    const msg: MessagePart = {
      mimeType: 'multipart/mixed',
      parts: [
        { ...part('text/plain', Buffer.from('attached')), filename: 'a.txt' },
        part('text/html', Buffer.from('<div>One&nbsp;&amp;&#233;</div><script>x()</script><p>Two</p>')),
      ],
    };
    expect(bodyText(msg)).toBe('One &é\n\nTwo');
  });

  it('is empty when no part has text', () => expect(bodyText({ mimeType: 'image/png', body: { attachmentId: 'x' } })).toBe(''));
});

describe('cutToBytes()', () => {
  it('never splits a character', () => {
    expect(cutToBytes('aé', 2)).toEqual({ text: 'a', truncated: true });
    expect(cutToBytes('a📨b', 4)).toEqual({ text: 'a', truncated: true });
    expect(cutToBytes('a📨b', 5)).toEqual({ text: 'a📨', truncated: true });
    expect(cutToBytes('abc', 3)).toEqual({ text: 'abc', truncated: false });
  });
});

describe('htmlToText()', () => {
  it('keeps text, drops style and comments, breaks lines at blocks', () => {
    expect(htmlToText('<style>.a{}</style><!-- c --><h1>Title</h1>line<br/>next &lt;tag&gt; &#x41;')).toBe('Title\nline\nnext <tag> A');
  });
});
