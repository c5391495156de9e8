/**
 * The five HMAC signature schemes as verifier contributions, registered like
 * any plugin's (`hooks.mappings[].verify.type`). Each validates its own
 * options: `secret` (one or a list during a rotation), `header`, and
 * `toleranceSeconds` for the schemes that sign a timestamp.
 */
import { Type } from '@sinclair/typebox';
import type { Plugin, VerifierFactory } from '../plugins/define.ts';
import { compileVerifier, SignatureConfigError, type VerifySpec } from './signatures.ts';
import { SCHEMES, type SignatureType } from './signature-schemes.ts';

const Secret = Type.String({ minLength: 1, description: 'signing secret' });
const HmacOptions = Type.Object(
  {
    secret: Type.Union([Secret, Type.Array(Secret, { minItems: 1 })]),
    header: Type.Optional(Type.String({ minLength: 1 })),
    toleranceSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400 })),
  },
  { additionalProperties: false },
);

function hmacVerifier(type: SignatureType): VerifierFactory<Omit<VerifySpec, 'type'>> {
  return {
    configSchema: HmacOptions,
    // throws SignatureConfigError listing every problem by its path in the options
    create(options) {
      const check = compileVerifier({ ...options, type });
      return { verify: (req) => check(req.headers, req.rawBody, req.receivedAt) };
    },
  };
}

export const signatureVerifiers: Plugin = {
  name: 'signatures',
  verifiers: Object.fromEntries(Object.keys(SCHEMES).map((t) => [t, hmacVerifier(t as SignatureType)])),
};

export { SignatureConfigError };
