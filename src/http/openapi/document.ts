/**
 * The OpenAPI 3.1 document (`GET /api/openapi.json`), built from the list of endpoints (paths.ts) and
 * the TypeBox schemas that validate requests and describe answers. OpenAPI 3.1 schemas are JSON
 * Schema 2020-12, which TypeBox writes, so the schemas go in as they are: a schema with an `$id`
 * becomes a reference to `components/schemas`, and TypeBox's `$ref: "<id>"` points there too.
 */
import type { TSchema } from '@sinclair/typebox';
import { operations as allOperations, type Operation } from './paths.ts';
import { namedSchemas } from './schemas.ts';

const COMPONENTS = '#/components/schemas/';

/** A plain JSON copy of a TypeBox schema, with references to named schemas pointing into components. */
function toJson(schema: TSchema, top = true): unknown {
  const walk = (node: unknown, root: boolean): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n, false));
    if (!node || typeof node !== 'object') return node;
    const o = node as Record<string, unknown>;
    if (!root && typeof o.$id === 'string') return { $ref: COMPONENTS + o.$id };
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(o)) {
      if (k === '$id') continue;
      if (k === '$ref' && typeof v === 'string' && !v.startsWith('#')) out.$ref = COMPONENTS + v;
      else out[k] = walk(v, false);
    }
    return out;
  };
  return walk(schema, top);
}

const security: Record<Operation['auth'], unknown[]> = {
  hook: [{ hookToken: [] }, { hookTokenHeader: [] }],
  gateway: [{ gatewayToken: [] }, { consoleSession: [] }],
  session: [{ consoleSession: [] }],
  none: [],
};

function operation(op: Operation): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, r] of Object.entries(op.responses)) {
    if (r === null) responses[status] = { description: 'no content' };
    else if (r.text)
      responses[status] = {
        description: r.description,
        content: Object.fromEntries([r.text].flat().map((t) => [t, { schema: { type: 'string' } }])),
      };
    else responses[status] = { description: r.description, content: { 'application/json': { schema: toJson(r.schema!, false) } } };
  }
  const out: Record<string, unknown> = {
    operationId: `${op.method}${op.path.replace(/\{hooks\}/, 'Hooks').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    summary: op.summary,
    tags: [op.tag],
    security: security[op.auth],
    responses,
  };
  if (op.params?.length)
    out.parameters = op.params.map((p) => ({
      name: p.name,
      in: p.in,
      required: p.in === 'path' ? true : (p.required ?? false),
      schema: toJson(p.schema, false),
      ...(p.description ? { description: p.description } : {}),
    }));
  if (op.body) out.requestBody = { required: true, content: { 'application/json': { schema: toJson(op.body, false) } } };
  return out;
}

export interface DocumentOptions {
  /** `hooks.path` of the serving configuration. */
  hooksPath: string;
  version: string;
  operations?: readonly Operation[];
}

export function openApiDocument(opts: DocumentOptions): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of opts.operations ?? allOperations) {
    const path = op.path.replace('{hooks}', opts.hooksPath);
    (paths[path] ??= {})[op.method] = operation(op);
  }
  const schemas: Record<string, unknown> = {};
  for (const s of namedSchemas) schemas[s.$id!] = toJson(s, true);
  return {
    openapi: '3.1.0',
    info: {
      title: 'hook-intake',
      version: opts.version,
      description: 'Webhook intake service for AI-agent gateways: hooks, the read API and the admin API.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    tags: [
      { name: 'hooks', description: "authenticated intake (hook token, or a mapping's provider signature)" },
      { name: 'read', description: 'read API (gateway token)' },
      { name: 'admin', description: 'admin actions (gateway token), each logged with who and what' },
      { name: 'console', description: 'the console at /ui: its files, sign-in, and the endpoints its pages use' },
      { name: 'health', description: 'liveness, readiness and metrics' },
    ],
    paths,
    components: {
      schemas,
      securitySchemes: {
        hookToken: { type: 'http', scheme: 'bearer', description: 'hooks.token' },
        hookTokenHeader: { type: 'apiKey', in: 'header', name: 'x-gateway-token', description: 'hooks.token in a header' },
        gatewayToken: { type: 'http', scheme: 'bearer', description: 'gateway.auth.token' },
        consoleSession: {
          type: 'apiKey',
          in: 'cookie',
          name: 'hook_intake_session',
          description: 'a console session (POST /ui/session); a call that changes state also needs X-CSRF-Token',
        },
      },
    },
  };
}
