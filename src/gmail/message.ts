/** One Gmail message as the gmail preset reads it (an item of the payload's `messages`). */
import type { GmailMessage } from './api.ts';
import { htmlToText } from './html-text.ts';
import { bodyText, cutToBytes, headerValue } from './mime.ts';

export interface MessageItem {
  id: string;
  threadId: string;
  from: string;
  to: string;
  subject: string;
  date: string;
  snippet: string;
  body?: string;
  bodyTruncated?: boolean;
  labels: string[];
}

export function messageItem(msg: GmailMessage, includeBody: boolean, maxBytes: number): MessageItem {
  const p = msg.payload;
  const item: MessageItem = {
    id: msg.id,
    threadId: msg.threadId ?? msg.id,
    from: headerValue(p, 'From'),
    to: headerValue(p, 'To'),
    subject: headerValue(p, 'Subject'),
    date: headerValue(p, 'Date'),
    // Gmail escapes the snippet as HTML (`&#39;`)
    snippet: htmlToText(msg.snippet ?? ''),
    labels: msg.labelIds ?? [],
  };
  if (includeBody) {
    const { text, truncated } = cutToBytes(bodyText(p), maxBytes);
    item.body = text;
    if (truncated) item.bodyTruncated = true;
  }
  return item;
}
