/**
 * The one Ajv setup behind every schema check: the config file, preset files,
 * plugin config slices, and the `/hooks/wake` and `/hooks/agent` bodies.
 *
 * Two instances, differing in `allErrors` and `useDefaults` only:
 * - files and slices report every problem at once (an operator fixes them in
 *   one go) and get their defaults filled in place;
 * - a request body is refused at its first problem (the 400 names one field),
 *   so a body of thousands of unknown keys costs one error, not thousands.
 * `strict: false` for both: TypeBox schemas carry keywords strict mode refuses. Files know
 * `discriminator` (`storage`: a form per driver, src/config/storage.ts).
 */
import { Ajv, type SchemaValidateFunction, type ValidateFunction } from 'ajv';
import { referencedSchemas } from './schema.ts';

let files: Ajv | undefined;
let bodies: Ajv | undefined;

/** A validator for a config-like schema: all errors, defaults filled, `$ref`s to the config's shared schemas resolved. */
export function compile<T = unknown>(schema: object): ValidateFunction<T> {
  files ??= new Ajv({ allErrors: true, useDefaults: true, discriminator: true, strict: false, schemas: referencedSchemas });
  return files.compile<T>(schema);
}

/** A validator for a request body: stops at the first error. Knows `maxChars` (see below). */
export function compileBody<T = unknown>(schema: object): ValidateFunction<T> {
  if (!bodies) {
    bodies = new Ajv({ allErrors: false, strict: false });
    bodies.addKeyword({ keyword: 'maxChars', type: 'string', schemaType: 'number', validate: maxChars });
  }
  return bodies.compile<T>(schema);
}

/**
 * `maxChars: n`, for the long strings of a body: at most n characters (code points), as `maxLength` counts
 * them, and failing with the same error. `maxLength` walks every string it checks to count its code points;
 * a string of at most n UTF-16 units cannot hold more than n code points, so only a longer one is counted
 * (a 100 KiB message under a 1,000,000 limit is not walked at all).
 */
const maxChars: SchemaValidateFunction = (limit: number, data: string): boolean => {
  if (data.length <= limit || codePoints(data) <= limit) return true;
  maxChars.errors = [{ keyword: 'maxLength', params: { limit }, message: `must NOT have more than ${limit} characters` }];
  return false;
};

/** The code points of `s`: a high surrogate followed by a low one counts once, any other unit once. */
export function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n--;
      i++;
    }
  }
  return n;
}
