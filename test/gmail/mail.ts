/**
 * Gmail messages as `users.messages.get` (format `full`) returns them, with real MIME structures:
 * multipart/alternative, quoted-printable, HTML only, ISO-8859-1 bodies and encoded-word subjects.
 * Gmail hands out part bodies base64url-encoded, after undoing the transfer encoding; one part
 * here keeps its quoted-printable form to show both are read alike.
 */
import type { MailboxMessage } from './google-standin.ts';

const b64u = (bytes: Buffer | string, enc: BufferEncoding = 'utf8') =>
  (typeof bytes === 'string' ? Buffer.from(bytes, enc) : bytes).toString('base64url');
const h = (name: string, value: string) => ({ name, value });

function top(headers: Record<string, string>) {
  return Object.entries(headers).map(([k, v]) => h(k, v));
}

/** multipart/alternative: a quoted-printable UTF-8 text part and an HTML part; an ISO-8859-1 encoded-word subject. */
export function invoiceMail(id: string): MailboxMessage {
  return {
    id,
    threadId: `t-${id}`,
    labelIds: ['INBOX', 'UNREAD'],
    snippet: 'Hi, the invoice from October is still open &amp; due',
    payload: {
      partId: '',
      mimeType: 'multipart/alternative',
      filename: '',
      headers: top({
        From: 'Ana Lima <ana@example.org>',
        To: 'ops@example.com',
        Subject: '=?ISO-8859-1?Q?Facture_2041_=E9chue?=',
        Date: 'Fri, 20 Nov 2026 09:12:00 +0000',
        'Content-Type': 'multipart/alternative; boundary="b1"',
      }),
      body: { size: 0 },
      parts: [
        {
          partId: '0',
          mimeType: 'text/plain',
          filename: '',
          headers: [h('Content-Type', 'text/plain; charset="UTF-8"'), h('Content-Transfer-Encoding', 'quoted-printable')],
          body: { size: 60, data: b64u('Hi,\r\nthe invoice from October is still open. Café Olá.\r\nAna') },
        },
        {
          partId: '1',
          mimeType: 'text/html',
          filename: '',
          headers: [h('Content-Type', 'text/html; charset="UTF-8"')],
          body: { size: 40, data: b64u('<p>HTML version must not win</p>') },
        },
      ],
    },
  };
}

/** HTML only, ISO-8859-1 body bytes, a UTF-8 base64 encoded-word subject. */
export function alertMail(id: string): MailboxMessage {
  return {
    id,
    threadId: `t-${id}`,
    labelIds: ['INBOX'],
    snippet: 'db-2 /var is at 91%',
    payload: {
      partId: '',
      mimeType: 'text/html',
      filename: '',
      headers: top({
        From: `=?UTF-8?B?${Buffer.from('Monitoring 📨').toString('base64')}?= <alerts@monitoring.example.net>`,
        To: 'ops@example.com',
        Subject: '=?UTF-8?B?RGlzayB1c2FnZSA5MSUgb24gZGItMg==?=',
        Date: 'Fri, 20 Nov 2026 09:15:00 +0000',
        'Content-Type': 'text/html; charset=ISO-8859-1',
      }),
      body: {
        size: 80,
        data: b64u(
          Buffer.from(
            '<html><head><style>p{}</style></head><body><p>db-2 /var is at 91% &amp; r\xe9sum\xe9</p><br>threshold&nbsp;90%</body></html>',
            'latin1',
          ),
        ),
      },
    },
  };
}

/** A text part still in quoted-printable (soft line breaks, `=XX` escapes), ISO-8859-1, inside multipart/mixed with an attachment. */
export function qpMail(id: string): MailboxMessage {
  return {
    id,
    threadId: `t-${id}`,
    labelIds: ['INBOX'],
    snippet: 'Soft breaks',
    payload: {
      partId: '',
      mimeType: 'multipart/mixed',
      filename: '',
      headers: top({ From: 'bob@example.com', To: 'ops@example.com', Subject: 'Soft breaks', Date: 'Fri, 20 Nov 2026 10:00:00 +0000' }),
      body: { size: 0 },
      parts: [
        {
          partId: '0',
          mimeType: 'text/plain',
          filename: 'notes.txt',
          headers: [h('Content-Type', 'text/plain'), h('Content-Disposition', 'attachment; filename="notes.txt"')],
          body: { size: 11, attachmentId: 'att-1' },
        },
        {
          partId: '1',
          mimeType: 'text/plain',
          filename: '',
          headers: [h('Content-Type', 'text/plain; charset=iso-8859-1'), h('Content-Transfer-Encoding', 'quoted-printable')],
          body: { size: 50, data: b64u('Gar=E7on, a long line =\r\nwrapped here. =FF end') },
        },
      ],
    },
  };
}
