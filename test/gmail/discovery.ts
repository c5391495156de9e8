/**
 * Checks HTTP requests and answers against a Google API discovery document (the format of
 * `test/fixtures/specs/gmail/gmail-v1.json` and `test/fixtures/specs/pubsub/pubsub-v1-pull.json`):
 * the method by verb and path (a `{+name}` path parameter keeps its slashes and must match the
 * parameter's `pattern`), each query parameter's name, type, enum and repetition, and a body's
 * fields against the request or response schema: unknown fields, types (int64 values are
 * strings, int32 numbers), enums, `byte` as base64, `google-datetime` as an RFC 3339 time, and
 * the fields whose description begins "Required." present.
 */

interface Param {
  type: string;
  location: string;
  repeated?: boolean;
  required?: boolean;
  enum?: string[];
  pattern?: string;
}
interface Method {
  id: string;
  httpMethod: string;
  path: string;
  parameters?: Record<string, Param>;
  request?: { $ref: string };
  response?: { $ref: string };
}
interface Resource {
  methods?: Record<string, Method>;
  resources?: Record<string, Resource>;
}

export interface Discovery {
  parameters: Record<string, Param>;
  schemas: Record<string, Record<string, any>>;
  resources?: Record<string, Resource>;
}

export interface DiscoveryChecker {
  /** The discovery method a request is for and the problems of its parameters and body. */
  checkRequest(verb: string, url: URL, body: unknown): { id?: string; problems: string[] };
  /** Problems of `value` against a schema (`{$ref: name}` for a named one). */
  shapeProblems(value: unknown, schema: Record<string, any>, where: string): string[];
}

function allMethods(resource: Resource, out: Method[] = []): Method[] {
  out.push(...Object.values(resource.methods ?? {}));
  for (const r of Object.values(resource.resources ?? {})) allMethods(r, out);
  return out;
}

const escapeRe = (s: string) => s.replace(/[.*+?^$()|[\]\\]/g, '\\$&');

/** `v1/{+subscription}:pull` → a regular expression over the URL path with named groups. */
function pathPattern(path: string): RegExp {
  const parts = path.split(/(\{\+?\w+\})/).map((part) => {
    const m = /^\{(\+?)(\w+)\}$/.exec(part);
    if (!m) return escapeRe(part);
    return m[1] ? `(?<${m[2]}>.+?)` : `(?<${m[2]}>[^/]+)`;
  });
  return new RegExp(`^/${parts.join('')}$`);
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

export function discoveryChecker(doc: Discovery): DiscoveryChecker {
  const methods = allMethods({ resources: doc.resources }).map((m) => ({ m, re: pathPattern(m.path) }));

  function shapeProblems(value: unknown, schema: Record<string, any>, where: string): string[] {
    if (schema.$ref) return shapeProblems(value, doc.schemas[schema.$ref]!, where);
    if (value === undefined || value === null) return [];
    const type = schema.type;
    if (type === 'object' || schema.properties) {
      if (typeof value !== 'object' || Array.isArray(value)) return [`${where}: not an object`];
      const missing = Object.entries((schema.properties ?? {}) as Record<string, any>)
        .filter(([k, p]) => String(p.description ?? '').startsWith('Required.') && (value as Record<string, unknown>)[k] === undefined)
        .map(([k]) => `${where}.${k}: required`);
      return missing.concat(
        Object.entries(value).flatMap(([k, v]) => {
          const prop = schema.properties?.[k] ?? (schema.additionalProperties as Record<string, any> | undefined);
          return prop ? shapeProblems(v, prop, `${where}.${k}`) : [`${where}.${k}: not in the discovery document`];
        }),
      );
    }
    if (type === 'array')
      return Array.isArray(value) ? value.flatMap((v, i) => shapeProblems(v, schema.items, `${where}[${i}]`)) : [`${where}: not an array`];
    if (type === 'string') {
      if (typeof value !== 'string') return [`${where}: not a string (int64 values are strings)`];
      if (schema.enum && !schema.enum.includes(value)) return [`${where}: ${value} not in ${schema.enum.join('|')}`];
      if (schema.format === 'byte' && !/^[A-Za-z0-9+/_-]*={0,2}$/.test(value)) return [`${where}: not base64`];
      if (schema.format === 'google-datetime' && !RFC3339.test(value)) return [`${where}: ${value} is not an RFC 3339 time`];
      if ((schema.format === 'int64' || schema.format === 'uint64') && !/^-?\d+$/.test(value)) return [`${where}: not an int64`];
      return [];
    }
    if (type === 'integer') return Number.isInteger(value) ? [] : [`${where}: not an integer`];
    if (type === 'number') return typeof value === 'number' ? [] : [`${where}: not a number`];
    if (type === 'boolean') return typeof value === 'boolean' ? [] : [`${where}: not a boolean`];
    return [];
  }

  function checkRequest(verb: string, url: URL, body: unknown): { id?: string; problems: string[] } {
    const path = decodeURIComponent(url.pathname);
    const found = methods.find(({ m, re }) => m.httpMethod === verb && re.test(path));
    if (!found) return { problems: [`${verb} ${url.pathname}: no such method in the discovery document`] };
    const { m, re } = found;
    const problems: string[] = [];
    const params = m.parameters ?? {};
    for (const [name, value] of Object.entries(re.exec(path)!.groups ?? {})) {
      const pattern = params[name]?.pattern;
      if (pattern && !new RegExp(pattern).test(value)) problems.push(`${m.id}: ${name}=${value} does not match ${pattern}`);
    }
    for (const key of new Set(url.searchParams.keys())) {
      const p: Param | undefined = params[key] ?? doc.parameters[key];
      if (p?.location !== 'query') {
        problems.push(`${m.id}: unknown query parameter ${key}`);
        continue;
      }
      const values = url.searchParams.getAll(key);
      if (values.length > 1 && !p.repeated) problems.push(`${m.id}: ${key} is not repeated`);
      for (const v of values) {
        if (p.type === 'integer' && !/^-?\d+$/.test(v)) problems.push(`${m.id}: ${key}=${v} is not an integer`);
        if (p.type === 'boolean' && !/^(true|false)$/.test(v)) problems.push(`${m.id}: ${key}=${v} is not a boolean`);
        if (p.enum && !p.enum.includes(v)) problems.push(`${m.id}: ${key}=${v} not in ${p.enum.join('|')}`);
      }
    }
    for (const [key, p] of Object.entries(params))
      if (p.required && p.location === 'query' && !url.searchParams.has(key)) problems.push(`${m.id}: ${key} is required`);
    if (m.request && body === undefined) problems.push(`${m.id}: a ${m.request.$ref} body is required`);
    if (m.request) problems.push(...shapeProblems(body, { $ref: m.request.$ref }, `${m.id} body`));
    else if (body !== undefined) problems.push(`${m.id}: takes no body`);
    return { id: m.id, problems };
  }

  return { checkRequest, shapeProblems };
}
