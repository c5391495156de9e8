/**
 * Request validators built from the providers' own published API specs in
 * test/fixtures/specs/ (see its README for each format's quirks). Each
 * validator takes a recorded request and returns what is wrong with it:
 * an operation the spec does not have, a wrong media type, missing auth, a
 * body that breaks the schema, and fields the spec does not describe (a
 * misspelt field must not pass just because a schema leaves objects open).
 *
 * `prefix` is the part of the path the service puts before the spec's paths
 * (Discord's `/api/v10`, Slack's `/api`); point the client's base URL at
 * stub.url + prefix.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import type { StubRequest, Validate } from './provider-stub.ts';

const SPECS = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'specs');
const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

type Schema = Record<string, any>;
type AnyAjv = Ajv | Ajv2020;

function readJson(path: string): any {
  return JSON.parse(readFileSync(join(SPECS, path), 'utf8'));
}
function readYaml(path: string): any {
  return parseYaml(readFileSync(join(SPECS, path), 'utf8'));
}

function newAjv(draft2020: boolean): AnyAjv {
  const opts = { strict: false, allErrors: true, logger: false as const };
  const ajv = draft2020 ? new Ajv2020(opts) : new Ajv(opts);
  addFormats(ajv as Ajv);
  return ajv;
}

function formatErrors(errors: ErrorObject[] | null | undefined): string[] {
  // a oneOf reports every branch's complaints; say each once
  return [...new Set((errors ?? []).map((e) => `body${e.instancePath} ${e.message ?? 'is invalid'} ${JSON.stringify(e.params)}`))];
}

/** JSON pointer escaping of one segment. */
function esc(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

function pointer(doc: any, ref: string): any {
  if (!ref.startsWith('#/')) return undefined;
  let node = doc;
  for (const part of ref.slice(2).split('/')) node = node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return node;
}

// ---- fields the spec does not describe ---------------------------------------------------------

interface Shape {
  props: Map<string, Schema[]>;
  items: Schema[];
  /** True when some branch allows any property (free-form object, a map, additionalProperties). */
  open: boolean;
  /** True when some branch is an object schema at all. */
  object: boolean;
}

/** The union of what every branch (allOf, anyOf, oneOf, $ref) of `schemas` declares. */
function shapeOf(doc: any, schemas: Schema[]): Shape {
  const shape: Shape = { props: new Map(), items: [], open: false, object: false };
  const seen = new Set<Schema>();
  const visit = (s: Schema | undefined): void => {
    if (!s || typeof s !== 'object' || seen.has(s)) return;
    seen.add(s);
    if (typeof s.$ref === 'string') visit(pointer(doc, s.$ref));
    for (const k of ['allOf', 'anyOf', 'oneOf'] as const) for (const b of s[k] ?? []) visit(b);
    if (s.items && typeof s.items === 'object' && !Array.isArray(s.items)) shape.items.push(s.items);
    if (s.properties) {
      shape.object = true;
      for (const [name, sub] of Object.entries<Schema>(s.properties)) {
        const list = shape.props.get(name) ?? [];
        list.push(sub);
        shape.props.set(name, list);
      }
    }
    const extra = s.additionalProperties ?? s.unevaluatedProperties;
    if (extra === true || (extra && typeof extra === 'object') || s.patternProperties) shape.open = true;
    const type = s.type;
    if ((type === 'object' || (Array.isArray(type) && type.includes('object'))) && !s.properties) shape.open = true;
  };
  for (const s of schemas) visit(s);
  if (!shape.object) shape.open = true;
  return shape;
}

/** Paths of object keys that no branch of the schema declares. */
export function undeclaredFields(doc: any, schema: Schema, value: unknown, at = 'body'): string[] {
  const out: string[] = [];
  const walk = (schemas: Schema[], v: unknown, path: string): void => {
    if (schemas.length === 0 || v === null || typeof v !== 'object') return;
    const shape = shapeOf(doc, schemas);
    if (Array.isArray(v)) {
      for (const [i, el] of v.entries()) walk(shape.items, el, `${path}/${i}`);
      return;
    }
    for (const [k, sub] of Object.entries(v)) {
      const decl = shape.props.get(k);
      if (decl) walk(decl, sub, `${path}/${k}`);
      else if (!shape.open) out.push(`${path}/${k} is not a field in the spec`);
    }
  };
  walk([schema], value, at);
  return out;
}

// ---- shared checks ---------------------------------------------------------------------------------

interface Route {
  template: string;
  params: Record<string, string>;
}

/** The spec path template that `path` (after `prefix`) matches exactly. */
function matchPath(templates: string[], path: string, prefix: string): Route | undefined {
  if (!path.startsWith(prefix)) return undefined;
  const rest = path.slice(prefix.length) || '/';
  for (const template of templates) {
    const names: string[] = [];
    const re = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{([^}]+)\}/g, (_m, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
    const m = new RegExp(`^${re}$`).exec(rest);
    if (m) return { template, params: Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)])) };
  }
  return undefined;
}

function header(req: StubRequest, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** Security requirements (OAS 3 `components.securitySchemes` or Swagger `securityDefinitions`): one alternative must hold. */
function checkSecurity(
  req: StubRequest,
  requirements: Array<Record<string, unknown>> | undefined,
  schemes: Record<string, Schema>,
): string[] {
  if (!requirements || requirements.length === 0) return [];
  const holds = (name: string): boolean => {
    const s = schemes[name];
    if (!s) return true;
    if (s.type === 'http' && String(s.scheme).toLowerCase() === 'bearer') return /^Bearer\s+\S+/i.test(header(req, 'authorization') ?? '');
    if (s.type === 'apiKey' && s.in === 'header') return Boolean(header(req, s.name));
    if (s.type === 'apiKey' && s.in === 'query') return req.query[s.name] !== undefined;
    return true; // oauth2 and others: the token's form is the client's business
  };
  if (requirements.some((r) => Object.keys(r).every(holds))) return [];
  return [`no credentials the spec accepts (${requirements.map((r) => Object.keys(r).join('+')).join(' or ')})`];
}

interface Param {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
  type?: string;
}

function resolveParams(doc: any, list: Param[] | undefined): Param[] {
  return (list ?? []).map((p: any) => (p.$ref ? pointer(doc, p.$ref) : p)).filter(Boolean);
}

/** Query and header parameters: required ones present, no unknown query names, header values valid. */
function checkParams(ajv: AnyAjv, req: StubRequest, params: Param[]): string[] {
  const out: string[] = [];
  const known = new Set(params.filter((p) => p.in === 'query').map((p) => p.name));
  for (const name of Object.keys(req.query)) if (!known.has(name)) out.push(`query parameter "${name}" is not in the spec`);
  for (const p of params) {
    if (p.in === 'query' && p.required && req.query[p.name] === undefined) out.push(`query parameter "${p.name}" is required`);
    if (p.in !== 'header') continue;
    let value = header(req, p.name);
    if (value === undefined) {
      if (p.required) out.push(`header "${p.name}" is required`);
      continue;
    }
    if (p.name.toLowerCase() === 'content-type') value = req.contentType;
    if (p.schema && !ajv.validate(p.schema, value)) out.push(`header "${p.name}" ${ajv.errors?.[0]?.message ?? 'is invalid'}`);
  }
  return out;
}

function checkBody(ajv: AnyAjv, doc: any, id: string, schemaPointer: string, req: StubRequest): string[] {
  const validate = ajv.getSchema(`${id}${schemaPointer}`) as ValidateFunction | undefined;
  if (!validate) return [`the spec has no schema at ${schemaPointer}`];
  if (req.body === undefined) return ['the body is missing or not JSON'];
  if (!validate(req.body)) return formatErrors(validate.errors);
  return undeclaredFields(doc, pointer(doc, schemaPointer), req.body);
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

function findOperation(doc: any, req: StubRequest, prefix: string): { route: Route; op: any; pathItem: any } | string {
  const route = matchPath(Object.keys(doc.paths ?? {}), req.path, prefix);
  if (!route) return `the spec has no path for ${req.path}${prefix ? ` (after the prefix ${prefix})` : ''}`;
  const pathItem = doc.paths[route.template];
  const method = req.method.toLowerCase();
  const op = METHODS.includes(method) ? pathItem[method] : undefined;
  if (!op) return `the spec has no ${req.method} on ${route.template}`;
  return { route, op, pathItem };
}

// ---- OpenAPI 3.x (Discord, WhatsApp, Mattermost) ------------------------------------------------------

function openApi3(id: string, doc: any, draft2020: boolean, prefix: string): Validate {
  doc.$id = id;
  const ajv = newAjv(draft2020);
  ajv.addSchema(doc);
  return (req) => {
    const found = findOperation(doc, req, prefix);
    if (typeof found === 'string') return [found];
    const { route, op, pathItem } = found;
    const out: string[] = [];
    out.push(...checkSecurity(req, op.security ?? doc.security, doc.components?.securitySchemes ?? {}));
    out.push(...checkParams(ajv, req, resolveParams(doc, [...(pathItem.parameters ?? []), ...(op.parameters ?? [])])));
    const body = op.requestBody?.$ref ? pointer(doc, op.requestBody.$ref) : op.requestBody;
    if (!body) {
      if (req.raw.length > 0) out.push('the spec describes no body for this operation');
      return out;
    }
    if (req.raw.length === 0) {
      if (body.required) out.push('the body is required');
      return out;
    }
    const media = Object.keys(body.content ?? {});
    if (!media.includes(req.contentType)) return [...out, `content-type "${req.contentType}" is not one of ${media.join(', ')}`];
    if (req.contentType !== 'application/json') return out;
    const at = `#/paths/${esc(route.template)}/${req.method.toLowerCase()}/requestBody/content/application~1json/schema`;
    out.push(...checkBody(ajv, doc, id, op.requestBody.$ref ? `${op.requestBody.$ref}/content/application~1json/schema` : at, req));
    return out;
  };
}

// ---- Swagger 2.0 with a body parameter (Teams, Signal) ---------------------------------------------------

function swagger2(id: string, doc: any, prefix: string): Validate {
  doc.$id = id;
  const ajv = newAjv(false);
  ajv.addSchema(doc);
  return (req) => {
    const found = findOperation(doc, req, prefix);
    if (typeof found === 'string') return [found];
    const { route, op, pathItem } = found;
    const out: string[] = [];
    out.push(...checkSecurity(req, op.security ?? doc.security, doc.securityDefinitions ?? {}));
    const params = resolveParams(doc, [...(pathItem.parameters ?? []), ...(op.parameters ?? [])]);
    out.push(
      ...checkParams(
        ajv,
        req,
        params.map((p) => (p.in === 'header' && !p.schema ? { ...p, schema: { type: p.type } } : p)),
      ),
    );
    const index = (op.parameters ?? []).findIndex((p: Param) => p.in === 'body');
    if (index < 0) {
      if (req.raw.length > 0) out.push('the spec describes no body for this operation');
      return out;
    }
    if (req.raw.length === 0) {
      if (op.parameters[index].required) out.push('the body is required');
      return out;
    }
    const consumes: string[] = op.consumes ?? doc.consumes ?? ['application/json'];
    if (!consumes.includes(req.contentType)) return [...out, `content-type "${req.contentType}" is not one of ${consumes.join(', ')}`];
    out.push(...checkBody(ajv, doc, id, `#/paths/${esc(route.template)}/${req.method.toLowerCase()}/parameters/${index}/schema`, req));
    return out;
  };
}

// ---- Slack: Swagger 2.0 with formData parameters ----------------------------------------------------------

/** Slack's documented rule for chat.postMessage, which the parameter list cannot say: some content is required. */
const SLACK_NEEDS_ONE_OF: Record<string, string[]> = { '/chat.postMessage': ['text', 'blocks', 'attachments'] };

function slackValueProblem(p: Param & { description?: string }, value: unknown, form: boolean): string | undefined {
  const type = p.type ?? 'string';
  if (form) {
    const s = String(value);
    if (type === 'boolean' && !/^(true|false|1|0)$/.test(s)) return `"${p.name}" must be a boolean`;
    if (type === 'integer' && !/^-?\d+$/.test(s)) return `"${p.name}" must be an integer`;
    if (type === 'number' && !Number.isFinite(Number(s))) return `"${p.name}" must be a number`;
    return undefined;
  }
  if (type === 'boolean' && typeof value !== 'boolean') return `"${p.name}" must be a boolean`;
  if (type === 'integer' && !Number.isInteger(value)) return `"${p.name}" must be an integer`;
  if (type === 'number' && typeof value !== 'number') return `"${p.name}" must be a number`;
  if (type === 'string' && typeof value !== 'string') {
    // a JSON body may carry what a form sends as JSON text ("A JSON-based array of …")
    const jsonText = /JSON/.test(p.description ?? '');
    if (!(jsonText && value !== null && typeof value === 'object')) return `"${p.name}" must be a string`;
  }
  return undefined;
}

function slack(doc: any, prefix: string): Validate {
  return (req) => {
    const found = findOperation(doc, req, prefix);
    if (typeof found === 'string') return [found];
    const { route, op } = found;
    const out: string[] = [];
    const params = resolveParams(doc, op.parameters) as Array<Param & { description?: string }>;
    const consumes: string[] = op.consumes ?? doc.consumes ?? [];
    if (req.raw.length > 0 && !consumes.includes(req.contentType))
      out.push(`content-type "${req.contentType}" is not one of ${consumes.join(', ')}`);
    const form = req.contentType === 'application/x-www-form-urlencoded';
    const fields: Record<string, unknown> = { ...req.query, ...(req.body && typeof req.body === 'object' ? req.body : {}) };
    const byName = new Map(params.filter((p) => p.in === 'formData' || p.in === 'query').map((p) => [p.name, p]));
    for (const [name, value] of Object.entries(fields)) {
      if (name === 'token') continue;
      const p = byName.get(name);
      if (!p) {
        out.push(`body/${name} is not a field in the spec (not a parameter of ${route.template})`);
        continue;
      }
      const problem = slackValueProblem(p, value, form || req.query[name] !== undefined);
      if (problem) out.push(problem);
    }
    for (const p of params) {
      if (p.name === 'token') {
        const bearer = /^Bearer\s+\S+/i.test(header(req, 'authorization') ?? '');
        if (p.required && !bearer && fields.token === undefined)
          out.push('"token" is required (as Authorization: Bearer or a token field)');
      } else if (p.required && fields[p.name] === undefined) out.push(`"${p.name}" is required`);
    }
    const oneOf = SLACK_NEEDS_ONE_OF[route.template];
    if (oneOf && !oneOf.some((n) => fields[n] !== undefined && fields[n] !== '')) out.push(`one of ${oneOf.join(', ')} is required`);
    return out;
  };
}

// ---- Telegram: the Bot API scrape, turned into JSON Schema -------------------------------------------------

const TELEGRAM_SCALARS: Record<string, Schema> = {
  Integer: { type: 'integer' },
  Float: { type: 'number' },
  String: { type: 'string' },
  Boolean: { type: 'boolean' },
  True: { const: true },
  // uploads travel as multipart; in JSON only a file id or URL (a string) can stand here
  InputFile: { type: 'string' },
};

function telegramType(name: string): Schema {
  if (name.startsWith('Array of ')) return { type: 'array', items: telegramType(name.slice('Array of '.length)) };
  return TELEGRAM_SCALARS[name] ?? { $ref: `#/$defs/${name}` };
}

function telegramFields(fields: Array<{ name: string; types: string[]; required: boolean }> = []): Schema {
  const properties: Schema = {};
  for (const f of fields) properties[f.name] = f.types.length === 1 ? telegramType(f.types[0]!) : { anyOf: f.types.map(telegramType) };
  return { type: 'object', properties, required: fields.filter((f) => f.required).map((f) => f.name), additionalProperties: false };
}

/** The Bot API as one JSON Schema document: `$defs` for types, `methods` for each method's parameters. */
export function telegramSchema(api: any): Schema {
  const $defs: Schema = {};
  for (const [name, t] of Object.entries<any>(api.types)) {
    if (TELEGRAM_SCALARS[name]) continue;
    if (t.subtypes) $defs[name] = { anyOf: t.subtypes.map((s: string) => ({ $ref: `#/$defs/${s}` })) };
    else if (t.fields) $defs[name] = telegramFields(t.fields);
    else $defs[name] = {};
  }
  const methods: Schema = {};
  for (const [name, m] of Object.entries<any>(api.methods)) methods[name] = telegramFields(m.fields);
  return { $id: 'telegram', $defs, methods };
}

function telegram(prefix: string): Validate {
  const api = readJson('telegram/api.min.json');
  const ajv = newAjv(false);
  ajv.addSchema(telegramSchema(api));
  return (req) => {
    const m = /^\/bot(\d+:[A-Za-z0-9_-]+)\/([A-Za-z]+)$/.exec(req.path.startsWith(prefix) ? req.path.slice(prefix.length) : '');
    if (!m) return [`not a Bot API path (/bot<id>:<secret>/<method>): ${req.path.replace(/\/bot[^/]*/, '/bot<token>')}`];
    const method = m[2]!;
    const spec = api.methods[method];
    if (!spec) return [`the Bot API has no method ${method}`];
    if (req.method !== 'POST' && req.method !== 'GET') return [`${req.method} is not how the Bot API is called`];
    const fields: Record<string, unknown> = { ...req.query, ...(req.body && typeof req.body === 'object' ? req.body : {}) };
    if (req.contentType === 'application/json' || (req.raw.length === 0 && Object.keys(req.query).length === 0)) {
      const validate = ajv.getSchema(`telegram#/methods/${method}`)!;
      return validate(fields) ? [] : formatErrors(validate.errors);
    }
    if (req.raw.length > 0 && req.contentType !== 'application/x-www-form-urlencoded' && req.contentType !== 'multipart/form-data') {
      return [`content-type "${req.contentType}" is not one the Bot API takes`];
    }
    // query strings and forms carry only text: check names and required fields
    const names = new Set(spec.fields?.map((f: any) => f.name) ?? []);
    const out = Object.keys(fields)
      .filter((k) => !names.has(k))
      .map((k) => `body/${k} is not a field in the spec`);
    for (const f of spec.fields ?? [])
      if (f.required && fields[f.name] === undefined) out.push(`body must have required property '${f.name}'`);
    return out;
  };
}

// ---- the providers ------------------------------------------------------------------------------------------

/** WhatsApp's variants write allOf[{$ref: base}, {additionalProperties: false, …}]; under JSON Schema that branch
 * rejects the base's fields. Move the closing to the parent as unevaluatedProperties (it sees every branch). */
export function fixAllOfClosing(node: any): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node.allOf)) {
    let closed = false;
    for (const branch of node.allOf) {
      if (branch && typeof branch === 'object' && branch.additionalProperties === false) {
        delete branch.additionalProperties;
        closed = true;
      }
    }
    if (closed) node.unevaluatedProperties = false;
  }
  for (const v of Object.values(node)) fixAllOfClosing(v);
}

function mattermostDoc(): any {
  return {
    openapi: '3.0.0',
    info: { title: 'Mattermost', version: '4' },
    paths: readYaml('mattermost/posts.yaml'),
    ...readYaml('mattermost/definitions.yaml'),
  };
}

export interface SpecOptions {
  /** The path before the spec's own paths; defaults to the real service's. */
  prefix?: string;
  /**
   * Body fields the service takes although its spec does not describe them (`body/pending_post_id`);
   * each needs a reason where it is passed. Only the "not a field in the spec" finding is waived.
   */
  allowFields?: string[];
}

const cache = new Map<string, Validate>();
function cached(key: string, make: () => Validate): Validate {
  let v = cache.get(key);
  if (!v) cache.set(key, (v = make()));
  return v;
}

function allowing(validate: Validate, fields: readonly string[] = []): Validate {
  if (fields.length === 0) return validate;
  const waived = fields.map((f) => `${f} is not a field in the spec`);
  return (req) => validate(req).filter((p) => !waived.some((w) => p === w || p.startsWith(`${w} (`)));
}

/** Telegram Bot API (any method): `/bot<token>/<method>`, JSON bodies type-checked, forms by names and required fields. */
export function telegramSpec(opts: SpecOptions = {}): Validate {
  const prefix = opts.prefix ?? '';
  return allowing(
    cached(`telegram ${prefix}`, () => telegram(prefix)),
    opts.allowFields,
  );
}

/** Discord HTTP API v10, e.g. POST /channels/{channel_id}/messages with MessageCreateRequest. */
export function discordSpec(opts: SpecOptions = {}): Validate {
  const prefix = opts.prefix ?? '/api/v10';
  return allowing(
    cached(`discord ${prefix}`, () => openApi3('discord', readJson('discord/openapi.json'), true, prefix)),
    opts.allowFields,
  );
}

/** WhatsApp Cloud API, e.g. POST /{Version}/{Phone-Number-ID}/messages with Message. */
export function whatsappSpec(opts: SpecOptions = {}): Validate {
  const prefix = opts.prefix ?? '';
  return allowing(
    cached(`whatsapp ${prefix}`, () => {
      const doc = readYaml('whatsapp/business-messaging-api_v23.0.yaml');
      fixAllOfClosing(doc);
      return openApi3('whatsapp', doc, true, prefix);
    }),
    opts.allowFields,
  );
}

/**
 * Mattermost API v4 posts, e.g. POST /api/v4/posts (CreatePost). `pending_post_id` is allowed by
 * default: the server reads the body as a whole Post (whose schema has it) and deduplicates on it,
 * though the CreatePost request schema leaves it out (see the spec's SOURCE.md).
 */
export function mattermostSpec(opts: SpecOptions = {}): Validate {
  const prefix = opts.prefix ?? '';
  return allowing(
    cached(`mattermost ${prefix}`, () => openApi3('mattermost', mattermostDoc(), false, prefix)),
    opts.allowFields ?? ['body/pending_post_id'],
  );
}

/** Bot Framework Connector, e.g. POST /v3/conversations/{conversationId}/activities with Activity. */
export function msteamsSpec(opts: SpecOptions = {}): Validate {
  const prefix = opts.prefix ?? '';
  return allowing(
    cached(`msteams ${prefix}`, () => swagger2('msteams', readJson('msteams/ConnectorAPI.json'), prefix)),
    opts.allowFields,
  );
}

/** signal-cli-rest-api, e.g. POST /v2/send with api.SendMessageV2. */
export function signalSpec(opts: SpecOptions = {}): Validate {
  const prefix = opts.prefix ?? '';
  return allowing(
    cached(`signal ${prefix}`, () => swagger2('signal', readJson('signal/swagger.json'), prefix)),
    opts.allowFields,
  );
}

/** Slack Web API (any method, e.g. /chat.postMessage, /conversations.open): fields against the method's parameter list. */
export function slackSpec(opts: SpecOptions = {}): Validate {
  const prefix = opts.prefix ?? '/api';
  return allowing(
    cached(`slack ${prefix}`, () => slack(readJson('slack/slack_web_openapi_v2_without_examples.json'), prefix)),
    opts.allowFields,
  );
}
