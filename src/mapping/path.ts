/**
 * Path expressions over JSON values, as used by templates and match rules:
 * `messages[0].subject`, `repository.full_name`, `labels[2]["display name"]`.
 *
 * Parsed once at load. Segments that could reach an object's prototype
 * (`__proto__`, `prototype`, `constructor`) are refused at parse time, and
 * lookups read own properties only, so a payload cannot steer a lookup into
 * inherited state.
 */

export type Segment = string | number;

export const FORBIDDEN_SEGMENTS = new Set(['__proto__', 'prototype', 'constructor']);

export class PathError extends Error {}

const IDENT = /[A-Za-z0-9_$-]/;

/** Parses `a.b[0]["c d"]` into segments; throws `PathError` with the reason. */
export function parsePath(expr: string): Segment[] {
  const s = expr.trim();
  if (!s) throw new PathError('empty path');
  const segs: Segment[] = [];
  let i = 0;
  const readIdent = () => {
    const start = i;
    while (i < s.length && IDENT.test(s[i]!)) i++;
    if (i === start) throw new PathError(`unexpected "${s[i] ?? 'end'}" at ${i + 1} in "${s}"`);
    return s.slice(start, i);
  };
  segs.push(readIdent());
  while (i < s.length) {
    const c = s[i];
    if (c === '.') {
      i++;
      segs.push(readIdent());
    } else if (c === '[') {
      i++;
      const q = s[i];
      if (q === '"' || q === "'") {
        const end = s.indexOf(q, i + 1);
        if (end === -1) throw new PathError(`unclosed quote in "${s}"`);
        segs.push(s.slice(i + 1, end));
        i = end + 1;
      } else {
        const start = i;
        while (i < s.length && s[i]! >= '0' && s[i]! <= '9') i++;
        if (i === start) throw new PathError(`expected an index or a quoted key after "[" in "${s}"`);
        segs.push(Number(s.slice(start, i)));
      }
      if (s[i] !== ']') throw new PathError(`expected "]" at ${i + 1} in "${s}"`);
      i++;
    } else throw new PathError(`unexpected "${c}" at ${i + 1} in "${s}"`);
  }
  for (const seg of segs) {
    if (typeof seg === 'string' && FORBIDDEN_SEGMENTS.has(seg)) throw new PathError(`"${seg}" is not allowed in a path`);
  }
  return segs;
}

/** Own-property lookup; `undefined` when any step is missing. */
export function getPath(value: unknown, segs: readonly Segment[]): unknown {
  let cur = value;
  for (let i = 0; i < segs.length; i++) {
    if (cur === null || typeof cur !== 'object') return undefined;
    const seg = segs[i]!;
    if (Array.isArray(cur)) {
      if (typeof seg !== 'number' && !/^\d+$/.test(seg)) return undefined;
      const idx = Number(seg);
      if (idx >= cur.length) return undefined;
      cur = cur[idx];
    } else {
      const key = String(seg);
      if (!Object.hasOwn(cur, key)) return undefined;
      cur = (cur as Record<string, unknown>)[key];
    }
  }
  return cur;
}
