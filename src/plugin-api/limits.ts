/**
 * The longest message each service takes, in the unit it counts. The
 * providers' API specs mostly do not encode these (or encode other numbers),
 * so they are kept here with their source. A channel's `textChunkLimit`
 * config can only lower them.
 */
import { utf16Length, utf8Length } from './split.ts';

export interface ServiceLimit {
  limit: number;
  measure(text: string): number;
}

/** Bot API sendMessage: "Text of the message to be sent, 1-4096 characters after entities parsing" (counted here on the HTML, which is longer). */
export const TELEGRAM: ServiceLimit = { limit: 4096, measure: utf16Length };
/** Discord's documented message content limit for bots (the OpenAPI file says 4000, the docs 2000). */
export const DISCORD: ServiceLimit = { limit: 2000, measure: utf16Length };
/** Slack chat.postMessage docs: text is truncated at 40,000 characters and should stay under 4,000. */
export const SLACK: ServiceLimit = { limit: 4000, measure: utf16Length };
/** Mattermost's server default is 16,383 runes; 4,000 keeps posts readable and within any configured limit seen in practice. */
export const MATTERMOST: ServiceLimit = { limit: 4000, measure: utf16Length };
/** WhatsApp Cloud API text messages: body up to 4,096 characters. */
export const WHATSAPP: ServiceLimit = { limit: 4096, measure: utf16Length };
/** Signal sends bodies over about 2 KiB as a "long text" attachment; stay under it, counted in UTF-8 bytes. */
export const SIGNAL: ServiceLimit = { limit: 2000, measure: utf8Length };
/** Teams takes ~100 KB payloads; 4,000 characters keeps a message readable. */
export const MSTEAMS: ServiceLimit = { limit: 4000, measure: utf16Length };
/** iMessage has no small hard limit; 4,000 characters keeps a message readable. */
export const IMESSAGE: ServiceLimit = { limit: 4000, measure: utf16Length };

/** The service's limit, lowered by the channel's `textChunkLimit` when that is smaller. */
export function chunkLimit(service: ServiceLimit, textChunkLimit: number | undefined): number {
  return textChunkLimit !== undefined && textChunkLimit > 0 ? Math.min(service.limit, textChunkLimit) : service.limit;
}
