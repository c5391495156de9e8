/**
 * Text out of a Gmail message (`users.messages.get`, format `full`): header values with RFC 2047
 * encoded words decoded, and the body as text: the first `text/plain` part, else the first
 * `text/html` part turned into text. Part bodies arrive base64url-encoded and are decoded in the
 * charset the part declares (TextDecoder: UTF-8, ISO-8859-1, windows-1252, …).
 */
import { htmlToText } from './html-text.ts';

export interface MessagePart {
  mimeType?: string;
  filename?: string;
  headers?: { name: string; value: string }[];
  body?: { data?: string; size?: number; attachmentId?: string };
  parts?: MessagePart[];
}

/** The value of header `name` (any case), encoded words decoded; '' when absent. */
export function headerValue(part: MessagePart | undefined, name: string): string {
  const lower = name.toLowerCase();
  const h = part?.headers?.find((x) => x.name.toLowerCase() === lower);
  return h ? decodeEncodedWords(h.value) : '';
}

const ENCODED_WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;

/** RFC 2047: `=?ISO-8859-1?Q?Caf=E9?=` → `Café`; the space between two encoded words is dropped. */
export function decodeEncodedWords(value: string): string {
  return value.replace(/(\?=)\s+(?==\?)/g, '$1').replace(ENCODED_WORD, (whole, charset: string, enc: string, text: string) => {
    const bytes = enc.toUpperCase() === 'B' ? Buffer.from(text, 'base64') : qpBytes(text.replace(/_/g, ' '));
    return decodeCharset(bytes, charset.split('*')[0]!) ?? whole;
  });
}

/** Bytes of quoted-printable text: `=XX` escapes, soft line breaks `=\r\n` removed. */
export function qpBytes(text: string): Buffer {
  const out: number[] = [];
  const s = text.replace(/=\r?\n/g, '');
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '=' && /^[0-9A-Fa-f]{2}$/.test(s.slice(i + 1, i + 3))) {
      out.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else out.push(...Buffer.from(c, 'latin1'));
  }
  return Buffer.from(out);
}

/** `bytes` as text in `charset`; undefined when the charset is unknown to TextDecoder. */
export function decodeCharset(bytes: Uint8Array, charset: string): string | undefined {
  try {
    return new TextDecoder(charset.trim().toLowerCase() || 'utf-8').decode(bytes);
  } catch {
    return undefined;
  }
}

/** The part's charset parameter (`Content-Type: text/plain; charset="iso-8859-1"`), default UTF-8. */
function charsetOf(part: MessagePart): string {
  const ct = headerValue(part, 'Content-Type');
  return /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(ct)?.[1] ?? 'utf-8';
}

/**
 * The part's content as bytes. Gmail undoes the transfer encoding before it base64url-encodes a
 * part; a part that still reads as quoted-printable (it says so, and every `=` starts an escape or
 * a soft line break) is decoded once more, so both forms give the same text.
 */
function partBytes(part: MessagePart): Buffer {
  const raw = Buffer.from(part.body?.data ?? '', 'base64url');
  if (!/quoted-printable/i.test(headerValue(part, 'Content-Transfer-Encoding'))) return raw;
  const text = raw.toString('latin1');
  const stillEncoded = /=(\r?\n|[0-9A-F]{2})/.test(text) && !/=(?!\r?\n|[0-9A-F]{2})/.test(text);
  return stillEncoded ? qpBytes(text) : raw;
}

/** Depth-first, the first part of `mimeType` that is not an attachment. */
function findPart(part: MessagePart, mimeType: string): MessagePart | undefined {
  const type = (part.mimeType ?? '').toLowerCase();
  const attachment = !!part.filename || /^attachment/i.test(headerValue(part, 'Content-Disposition'));
  if (type === mimeType && !attachment && part.body?.data !== undefined) return part;
  for (const child of part.parts ?? []) {
    const found = findPart(child, mimeType);
    if (found) return found;
  }
  return undefined;
}

/** The message's text: its `text/plain` part, else its `text/html` part as text, else ''. */
export function bodyText(payload: MessagePart | undefined): string {
  if (!payload) return '';
  const plain = findPart(payload, 'text/plain');
  if (plain) return decodeCharset(partBytes(plain), charsetOf(plain)) ?? partBytes(plain).toString('latin1');
  const html = findPart(payload, 'text/html');
  if (html) return htmlToText(decodeCharset(partBytes(html), charsetOf(html)) ?? partBytes(html).toString('latin1'));
  return '';
}

/** `text` cut to at most `maxBytes` UTF-8 bytes, never inside a character. */
export function cutToBytes(text: string, maxBytes: number): { text: string; truncated: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { text, truncated: false };
  let end = maxBytes;
  // step back over continuation bytes (10xxxxxx) to the start of a character
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return { text: bytes.subarray(0, end).toString('utf8'), truncated: true };
}
