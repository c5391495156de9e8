/**
 * Validation of a parsed config against `ConfigSchema` with ajv, and the
 * translation of ajv's errors into `file: key.path: reason` issues with a
 * "did you mean" hint for unknown keys.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { TSchema } from '@sinclair/typebox';
import type { ConfigIssue } from '../errors.ts';
import { ConfigSchema, keyPattern, knownKeys, type Config } from './schema.ts';
import { compile } from './ajv.ts';
import { formatPath } from './interpolate.ts';
import { didYouMean } from '../util/did-you-mean.ts';

let compiled: ValidateFunction | undefined;
function validator(): ValidateFunction {
  compiled ??= compile(ConfigSchema);
  return compiled;
}

/** Validates `data` in place (defaults are filled) and returns the issues found. */
export function validateConfig(data: unknown, file: string): { config?: Config; issues: ConfigIssue[] } {
  const validate = validator();
  if (validate(data)) return { config: data as Config, issues: [] };
  return { issues: translateAjvErrors(validate.errors ?? [], file, ConfigSchema) };
}

export function pointerToPath(pointer: string): (string | number)[] {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/**
 * ajv reports every branch of a failed union. Keep one useful line per
 * failure: for a union of literals "must be one of …", otherwise the most
 * specific error found inside the union.
 */
export function translateAjvErrors(errs: ErrorObject[], file: string, schema: TSchema): ConfigIssue[] {
  const unions = errs.filter((e) => e.keyword === 'anyOf');
  const insideUnion = (e: ErrorObject, u: ErrorObject) =>
    e !== u && e.schemaPath.startsWith(u.schemaPath.replace(/\/anyOf$/, '/anyOf/')) && e.instancePath.startsWith(u.instancePath);
  const issues = new Map<string, ConfigIssue>();
  const add = (pointer: string, message: string) => {
    const path = formatPath(pointerToPath(pointer));
    const key = `${path}\u0000${message}`;
    if (!issues.has(key)) issues.set(key, { file, path, message });
  };

  for (const e of errs) {
    if (unions.some((u) => insideUnion(e, u))) continue;
    // a form picked by a key (`storage.driver`): the key's own check names a wrong value
    if (e.keyword === 'discriminator') continue;
    if (e.keyword === 'anyOf') {
      const children = errs.filter((c) => insideUnion(c, e));
      const consts = children.filter((c) => c.keyword === 'const').map((c) => (c.params as { allowedValue: unknown }).allowedValue);
      if (consts.length && consts.length === children.filter((c) => c.instancePath === e.instancePath && c.keyword !== 'type').length) {
        add(e.instancePath, `must be one of ${consts.map((c) => JSON.stringify(c)).join(', ')}`);
        continue;
      }
      const deepest = children.reduce<ErrorObject | undefined>(
        (best, c) => (!best || c.instancePath.length > best.instancePath.length ? c : best),
        undefined,
      );
      if (deepest && deepest.instancePath.length > e.instancePath.length) add(deepest.instancePath, describe(deepest, schema));
      else add(e.instancePath, 'does not match any of the allowed forms');
      continue;
    }
    if (e.keyword === 'additionalProperties') {
      // name the unknown key itself, so the path (and the line) point at it
      const key = String((e.params as { additionalProperty: string }).additionalProperty);
      add(`${e.instancePath}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, describe(e, schema));
      continue;
    }
    add(e.instancePath, describe(e, schema));
  }
  return [...issues.values()];
}

function describe(e: ErrorObject, schema: TSchema): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = String(p.additionalProperty);
      const segs = pointerToPath(e.instancePath).map(String);
      const pattern = keyPattern(schema, segs);
      if (pattern) return `is not a valid id (must match ${pattern})`;
      const hint = didYouMean(key, knownKeys(schema, segs));
      return `unknown key${hint ? ` (did you mean "${hint}"?)` : ''}`;
    }
    case 'required':
      return `missing required key "${String(p.missingProperty)}"`;
    case 'type':
      return `must be ${String(p.type)}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'pattern':
      return `must match ${String(p.pattern)}`;
    case 'propertyNames':
      return `has an invalid key "${String(p.propertyName)}"`;
    default:
      return e.message ?? `fails ${e.keyword}`;
  }
}
