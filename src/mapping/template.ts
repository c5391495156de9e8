/**
 * Templates (docs/mappings.md, "Templates"): `{{expr}}` where expr is
 *   `path`                the hook name after the prefix
 *   `now`                 the request time, ISO 8601
 *   `headers.<name>`      a request header (case-insensitive name)
 *   `query.<name>`        a query parameter (never the token)
 *   `payload` / `payload.<path>`
 *   `item` / `item.<path>` / `index`   the current element of a `forEach` mapping
 *   `<path>`              a bare path: the current item first (in `forEach`), then the payload
 * In a `forEach` mapping, index 0 of the `forEach` array (`messages[0].id`,
 * `payload.messages[0].id` for `forEach: "messages"`) is the current item, as
 * in OpenClaw: a template written for one message per request works per item.
 * Missing values render as "", strings as they are, other values as JSON.
 * `\{{` writes a literal `{{`. Parsed once at load into a list of parts.
 */
import { FORBIDDEN_SEGMENTS, getPath, parsePath, type PathError, type Segment } from './path.ts';

export interface TemplateScope {
  name: string;
  now: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  query: Readonly<Record<string, string>>;
  payload: unknown;
  item?: unknown;
  index?: number;
}

export type Getter = (scope: TemplateScope) => unknown;
export type Template = ((scope: TemplateScope) => string) & { readonly source: string; readonly isStatic: boolean };

export class TemplateError extends Error {}

export interface TemplateOptions {
  /** The mapping's `forEach` field: index 0 of that array is the current item. */
  forEach?: string | undefined;
}

/** `<forEach>[0]…` as a path into the current item, or undefined for any other path. */
function itemPath(segs: readonly Segment[], forEach: string | undefined): Segment[] | undefined {
  if (forEach === undefined || segs[0] !== forEach || segs.length < 2 || String(segs[1]) !== '0') return undefined;
  return segs.slice(2);
}

/** Compiles one expression (the text between the braces) to a getter. */
export function compileExpr(expr: string, opts: TemplateOptions = {}): Getter {
  const e = expr.trim();
  if (e === 'path') return (s) => s.name;
  if (e === 'now') return (s) => s.now;
  if (e === 'index') return (s) => s.index;
  if (e === 'payload') return (s) => s.payload;
  if (e === 'item') return (s) => s.item;
  // `payload[0].id` reads into a payload that is an array (SendGrid and HubSpot post arrays)
  if (e.startsWith('payload[')) {
    const inPayload = pathSegments(e).slice(1);
    return (s) => getPath(s.payload, inPayload);
  }
  const dot = e.indexOf('.');
  const head = dot === -1 ? e : e.slice(0, dot);
  const rest = dot === -1 ? '' : e.slice(dot + 1);
  if (head === 'headers') {
    if (!rest) throw new TemplateError('"headers" needs a header name, e.g. headers.x-github-event');
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(rest)) throw new TemplateError(`"${rest}" is not a header name`);
    const name = rest.toLowerCase();
    if (FORBIDDEN_SEGMENTS.has(name)) throw new TemplateError(`"${rest}" is not allowed in a path`);
    return (s) => {
      // own properties only: request headers are a plain object, so `constructor` would be inherited
      const v = Object.hasOwn(s.headers, name) ? s.headers[name] : undefined;
      return Array.isArray(v) ? v.join(', ') : v;
    };
  }
  if (head === 'query') {
    if (!rest) throw new TemplateError('"query" needs a parameter name, e.g. query.source');
    if (FORBIDDEN_SEGMENTS.has(rest)) throw new TemplateError(`"${rest}" is not allowed in a path`);
    return (s) => (Object.hasOwn(s.query, rest) ? s.query[rest] : undefined);
  }
  const segs = pathSegments(head === 'payload' || head === 'item' ? rest : e);
  if (head === 'item') return (s) => getPath(s.item, segs);
  const inItem = itemPath(segs, opts.forEach);
  if (inItem) return (s) => getPath(s.item, inItem);
  if (head === 'payload') return (s) => getPath(s.payload, segs);
  return (s) => {
    if (s.item !== undefined) {
      const v = getPath(s.item, segs);
      if (v !== undefined) return v;
    }
    return getPath(s.payload, segs);
  };
}

/** A path's segments, or a TemplateError saying what is wrong with it. */
function pathSegments(path: string): Segment[] {
  try {
    return parsePath(path);
  } catch (err) {
    throw new TemplateError((err as PathError).message);
  }
}

export function stringify(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v);
}

/** Parses `source` once; throws `TemplateError` naming the problem. */
export function compileTemplate(source: string, opts: TemplateOptions = {}): Template {
  const parts: (string | Getter)[] = [];
  let lit = '';
  let i = 0;
  while (i < source.length) {
    if (source.startsWith('\\{{', i)) {
      lit += '{{';
      i += 3;
      continue;
    }
    if (source.startsWith('{{', i)) {
      const end = source.indexOf('}}', i + 2);
      if (end === -1) throw new TemplateError(`unclosed "{{" at ${i + 1}`);
      const expr = source.slice(i + 2, end);
      if (!expr.trim()) throw new TemplateError(`empty "{{}}" at ${i + 1}`);
      if (lit) parts.push(lit);
      lit = '';
      try {
        parts.push(compileExpr(expr, opts));
      } catch (err) {
        throw new TemplateError(`{{${expr}}}: ${(err as Error).message}`);
      }
      i = end + 2;
      continue;
    }
    lit += source[i];
    i++;
  }
  if (lit) parts.push(lit);

  let render: (scope: TemplateScope) => string;
  if (parts.length === 0) render = () => '';
  else if (parts.length === 1 && typeof parts[0] === 'string') {
    const only = parts[0];
    render = () => only;
  } else if (parts.length === 1) {
    const g = parts[0] as Getter;
    render = (s) => stringify(g(s));
  } else {
    render = (s) => {
      let out = '';
      for (const p of parts) out += typeof p === 'string' ? p : stringify(p(s));
      return out;
    };
  }
  return Object.assign(render, { source, isStatic: parts.every((p) => typeof p === 'string') });
}
