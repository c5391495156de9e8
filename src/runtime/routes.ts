/**
 * Where a reply goes. `last` means the main route: the route of the last
 * successful delivery of the main session (a heartbeat's reply), else
 * `session.defaultRoute`, else the channel whose id is `whatsapp` when
 * configured. Replies of other sessions never change it, so a conversation
 * elsewhere cannot draw the main session's replies to itself.
 */
import type { Generation } from '../generation/types.ts';
import type { MetaRecords } from '../store/roles.ts';

export interface Route {
  channel: string;
  to: string | null;
}

export type RouteDecision = { route: Route } | { skip: string; route?: Partial<Route> };

/** The stored main route, parsed once per value (it is read for every delivery and rarely changes). */
let lastStored: { text: string; route: Route | undefined } | undefined;
function parseRoute(text: string): Route | undefined {
  if (lastStored?.text !== text) {
    let route: Route | undefined;
    try {
      route = JSON.parse(text) as Route;
    } catch {
      // a damaged value falls through to the configured defaults
    }
    lastStored = { text, route };
  }
  return lastStored.route;
}

export async function mainRoute(gen: Generation, meta: MetaRecords): Promise<Route | undefined> {
  const stored = await meta.getMeta('mainRoute');
  const r = stored ? parseRoute(stored) : undefined;
  if (r && gen.channels.has(r.channel)) return r;
  const def = gen.config.session.defaultRoute;
  if (def && gen.channels.has(def.channel)) return { channel: def.channel, to: def.to ?? null };
  if (gen.channels.has('whatsapp')) return { channel: 'whatsapp', to: null };
  return undefined;
}

export async function resolveRoute(gen: Generation, meta: MetaRecords, channel: string, to: string | null): Promise<RouteDecision> {
  const main = await mainRoute(gen, meta);
  let route: Route;
  if (channel === 'last') {
    if (!main) return { skip: 'no main route is known yet (set session.defaultRoute)' };
    route = { channel: main.channel, to: to ?? main.to };
  } else {
    if (!gen.channels.has(channel)) return { skip: `channel "${channel}" is not configured`, route: { channel, to } };
    const def = gen.config.session.defaultRoute;
    route = {
      channel,
      to: to ?? (main?.channel === channel ? main.to : null) ?? (def?.channel === channel ? (def.to ?? null) : null),
    };
  }
  const entry = gen.channels.get(route.channel)!;
  if (entry.channel.limits?.requiresTo && !route.to) return { skip: `no recipient for channel "${route.channel}" (set "to")`, route };
  // a recipient not checked at intake (one of `last`, or of session.defaultRoute) is checked here
  const problem = route.to === null ? undefined : entry.channel.checkTo?.(route.to);
  if (problem) return { skip: `the recipient does not fit channel "${route.channel}": it must be ${problem}`, route };
  return { route };
}
