/**
 * The built-in verifiers, registered like any plugin's (`hooks.mappings[].verify.type`;
 * docs/verifiers.md): the HMAC signature schemes of auth/signature-schemes.ts, each validating its
 * own options (`secret`, one or a list during a rotation; `header`; `toleranceSeconds` for the
 * schemes that sign a timestamp); the providers whose scheme is more than an HMAC of the body
 * (auth/providers/: `gitlab`, `postmark`, `twilio`, `hubspot`, `sendgrid`, `mailgun`, and `linear`
 * and `zoom` around their HMAC); and the chat services' (`telegram`, `discord`, `meta`, `mattermost`;
 * `slack` is the HMAC scheme answering Slack's URL check, `github` the one answering GitHub's ping).
 */
import { Type } from '@sinclair/typebox';
import type { Plugin, VerifierFactory } from '../plugins/define.ts';
import { compileVerifier, SignatureConfigError, type VerifySpec } from './signatures.ts';
import { SCHEMES, type SignatureType } from './signature-schemes.ts';
import { telegramVerifier } from './chat/telegram.ts';
import { discordVerifier } from './chat/discord.ts';
import { metaVerifier } from './chat/meta.ts';
import { mattermostVerifier } from './chat/mattermost.ts';
import { withUrlVerification } from './chat/slack.ts';
import { withPing } from './github-ping.ts';
import { bodyWithoutToken } from './chat/tokens.ts';
import { gitlabVerifier } from './providers/gitlab.ts';
import { hubspotVerifier } from './providers/hubspot.ts';
import { linearVerifier } from './providers/linear.ts';
import { mailgunVerifier } from './providers/mailgun.ts';
import { postmarkVerifier } from './providers/postmark.ts';
import { sendgridVerifier } from './providers/sendgrid.ts';
import { twilioVerifier } from './providers/twilio.ts';
import { zoomVerifier } from './providers/zoom.ts';

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
      // Slack's events and slash commands also carry the app's legacy verification token in the body's token field
      if (type === 'slack')
        return {
          verify: (req) => withUrlVerification(check(req.headers, req.rawBody, req.receivedAt), req.payload),
          keptBody: bodyWithoutToken,
        };
      // GitHub's ping when a webhook is created is answered 204, whatever the mapping takes
      if (type === 'github') return { verify: (req) => withPing(check(req.headers, req.rawBody, req.receivedAt), req.headers) };
      return { verify: (req) => check(req.headers, req.rawBody, req.receivedAt) };
    },
  };
}

export const signatureVerifiers: Plugin = {
  name: 'signatures',
  verifiers: {
    ...Object.fromEntries(Object.keys(SCHEMES).map((t) => [t, hmacVerifier(t as SignatureType)])),
    telegram: telegramVerifier,
    discord: discordVerifier,
    meta: metaVerifier,
    mattermost: mattermostVerifier,
    gitlab: gitlabVerifier,
    postmark: postmarkVerifier,
    twilio: twilioVerifier,
    hubspot: hubspotVerifier,
    sendgrid: sendgridVerifier,
    mailgun: mailgunVerifier,
    linear: linearVerifier,
    zoom: zoomVerifier,
  },
};

export { SignatureConfigError };
