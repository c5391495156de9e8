/**
 * The one Ajv setup behind every schema check: the config file, preset files,
 * plugin config slices, and the `/hooks/wake` and `/hooks/agent` bodies.
 *
 * Two instances, differing in `allErrors` and `useDefaults` only:
 * - files and slices report every problem at once (an operator fixes them in
 *   one go) and get their defaults filled in place;
 * - a request body is refused at its first problem (the 400 names one field),
 *   so a body of thousands of unknown keys costs one error, not thousands.
 * `strict: false` for both: TypeBox schemas carry keywords strict mode refuses.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { referencedSchemas } from './schema.ts';

let files: Ajv | undefined;
let bodies: Ajv | undefined;

/** A validator for a config-like schema: all errors, defaults filled, `$ref`s to the config's shared schemas resolved. */
export function compile<T = unknown>(schema: object): ValidateFunction<T> {
  files ??= new Ajv({ allErrors: true, useDefaults: true, strict: false, schemas: referencedSchemas });
  return files.compile<T>(schema);
}

/** A validator for a request body: stops at the first error. */
export function compileBody<T = unknown>(schema: object): ValidateFunction<T> {
  bodies ??= new Ajv({ allErrors: false, strict: false });
  return bodies.compile<T>(schema);
}
