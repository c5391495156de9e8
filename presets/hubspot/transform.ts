/**
 * The `hubspot` preset's messages (docs/presets/hubspot.md). HubSpot posts its subscription events
 * in batches (an array, up to 100), and a batch becomes one action per CRM record it touches: the
 * events about one contact, company, deal or ticket are one message in that record's session, so a
 * record created and given three properties in one batch is one run, not four.
 */
import type { PartialAction, TransformContext, TransformResult } from 'hook-intake/transform';
import { lines, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');

/** HubSpot's object type ids, for the link to a record (`/contacts/<portal>/record/0-1/<id>`). */
const TYPE_IDS: Record<string, string> = { contact: '0-1', company: '0-2', deal: '0-3', ticket: '0-5' };
const MAX_EVENTS_SHOWN = 15;

export default function hubspot(ctx: TransformContext<unknown>): TransformResult {
  const events = (Array.isArray(ctx.payload) ? ctx.payload : [ctx.payload]).map(obj);
  const records = new Map<string, Obj[]>();
  for (const e of events) {
    const key = `${objectType(e)}:${str(e.objectId) || str(e.eventId)}`;
    records.set(key, [...(records.get(key) ?? []), e]);
  }
  return [...records.values()].map((group) => {
    const first = group[0]!;
    const type = objectType(first);
    const id = str(first.objectId);
    // result() gives one action for one message: never an array or null here
    return result(
      ctx,
      record(type, id, group),
      id ? sessionKey('hook:hubspot', str(first.portalId), type, id) : undefined,
    ) as PartialAction;
  });
}

/** `contact` from `contact.propertyChange`, or the generic subscriptions' `objectTypeId`. */
function objectType(e: Obj): string {
  const sub = str(e.subscriptionType) || str(e.eventType);
  const head = sub.includes('.') ? sub.slice(0, sub.indexOf('.')) : sub;
  if (head && head !== 'object') return head;
  const typeId = str(e.objectTypeId);
  return Object.keys(TYPE_IDS).find((k) => TYPE_IDS[k] === typeId) ?? (typeId || 'object');
}

/** The events of one record: a headline, a line per event, the link. */
function record(type: string, id: string, events: Obj[]): string {
  const portal = str(events[0]!.portalId);
  const typeId = TYPE_IDS[type] ?? str(events[0]!.objectTypeId);
  const link = portal && id && typeId ? `https://app.hubspot.com/contacts/${portal}/record/${typeId}/${id}` : '';
  const shown = events.slice(0, MAX_EVENTS_SHOWN).map((e) => eventLine(e));
  const head = `HubSpot ${type.replace(/_/g, ' ')}${id ? ` ${id}` : ''}`;
  if (shown.length === 1) return lines(`${head} ${shown[0]}`, link);
  return lines(
    `${head}: ${events.length} changes`,
    ...shown.map((s) => `- ${s}`),
    events.length > MAX_EVENTS_SHOWN && `(${events.length - MAX_EVENTS_SHOWN} more not listed)`,
    link,
  );
}

const source = (e: Obj): string => (str(e.changeSource) ? ` (source ${oneLine(e.changeSource, 40)})` : '');

/** What one event did to its record, after the record's name: `created (source IMPORT)`. */
function eventLine(e: Obj): string {
  const sub = str(e.subscriptionType) || str(e.eventType);
  const action = sub.slice(sub.indexOf('.') + 1);
  switch (action) {
    case 'creation':
      return `created${source(e)}`;
    case 'deletion':
      return `deleted${source(e)}`;
    case 'privacyDeletion':
      return 'deleted for privacy (a GDPR deletion: remove what you hold about it)';
    case 'restore':
      return `restored${source(e)}`;
    case 'propertyChange':
      return `${oneLine(e.propertyName, 80) || 'a property'} changed to "${oneLine(e.propertyValue, 200)}"${source(e)}`;
    case 'merge': {
      const merged = Array.isArray(e.mergedObjectIds) ? e.mergedObjectIds.map(str).join(', ') : '';
      return `merged${merged ? ` with ${merged}` : ''}${str(e.primaryObjectId) ? ` into ${str(e.primaryObjectId)}` : ''}${source(e)}`;
    }
    case 'associationChange':
      return `${e.associationRemoved === true ? 'unlinked from' : 'linked to'} ${oneLine(e.associationType, 60).toLowerCase().replace(/_/g, ' ')} ${str(e.toObjectId)}${source(e)}`;
    case 'newMessage':
      return `got a new message ${str(e.messageId)}${str(e.messageType) ? ` (${oneLine(e.messageType, 40)})` : ''}`;
    default: {
      const { portalId: _p, appId: _a, subscriptionId: _s, attemptNumber: _n, eventId: _e, objectId: _o, ...rest } = e;
      return `event "${oneLine(sub, 80) || 'unnamed'}": ${summarize(rest).replace(/\n/g, '; ')}`;
    }
  }
}
