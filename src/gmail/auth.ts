/**
 * `webhooks gmail auth` without the CLI: the installed-app flow (Gmail's read-only scope, and
 * Pub/Sub's in pull mode), then the refresh token written
 * (mode 0600) to the file `hooks.gmail.oauth.refreshToken` points at, or to a new file under
 * `secrets/` that the config is then pointed at. A client secret file given on the command line
 * supplies `oauth.clientId` and `oauth.clientSecret` (the secret stored the same way).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { dataDirTokens } from '../cli/tokens.ts';
import { loadConfig } from '../config/load.ts';
import { validateConfig } from '../config/validate.ts';
import { editConfigFile, editConfigText } from '../config/edit.ts';
import { GMAIL_SCOPE, installedAppFlow, readClientFile } from './oauth-flow.ts';
import { PUBSUB_SCOPE } from './pubsub.ts';
import { fileRef, SECRETS_DIR, secretFileOf, writeSecretFile } from '../config/secret-files.ts';
import { GmailConfigError, type Deps, type Gmail } from './settings.ts';

export interface AuthOptions {
  file: string;
  dataDir: string;
  /** Google's client file (`client_secret_….json`). */
  clientSecretFile?: string;
  deps: Deps;
  /** Gets the consent URL to show. */
  show: (url: string) => void;
}

const OAUTH = ['hooks', 'gmail', 'oauth'];

export async function runAuth(o: AuthOptions): Promise<{ refreshTokenFile: string; notes: string[] }> {
  const dir = dirname(o.file);
  const loaded = loadConfig({ file: o.file, dataDir: o.dataDir, tokenFallback: dataDirTokens(o.dataDir, false).fallback });
  // the URLs (and their defaults) even when hooks.gmail is not written yet
  const gmail: Gmail = loaded.config.hooks.gmail ?? validateConfig({ hooks: { gmail: {} } }, o.file).config!.hooks.gmail!;
  const client = o.clientSecretFile ? readClientFile(readFileSync(o.clientSecretFile, 'utf8')) : undefined;
  const clientId = client?.clientId ?? gmail.oauth?.clientId;
  const clientSecret = client?.clientSecret ?? gmail.oauth?.clientSecret;
  if (!clientId || !clientSecret)
    throw new GmailConfigError('--client-secret FILE is required (hooks.gmail.oauth.clientId and clientSecret are not set)');

  const raw = editConfigText(o.file, readFileSync(o.file, 'utf8'));
  const rawToken = raw.get([...OAUTH, 'refreshToken']);
  const tokenFile = secretFileOf(rawToken, dir) ?? join(dir, SECRETS_DIR, 'gmail-refresh-token');
  if (rawToken !== undefined && !secretFileOf(rawToken, dir)) {
    throw new GmailConfigError('hooks.gmail.oauth.refreshToken is a string; make it { file: "path" } so auth can store the token there');
  }

  // pull mode calls Pub/Sub with the mailbox's token; push mode needs Gmail's scope only
  const scopes = gmail.mode === 'pull' ? [GMAIL_SCOPE, PUBSUB_SCOPE] : [GMAIL_SCOPE];
  const refreshToken = await installedAppFlow({
    authUrl: gmail.authUrl,
    tokenUrl: gmail.tokenUrl,
    clientId,
    clientSecret,
    scopes,
    show: o.show,
    deps: o.deps,
  });
  writeSecretFile(tokenFile, refreshToken);
  const notes = [`refresh token stored in ${tokenFile} (mode 0600), for ${scopes.join(' ')}`];

  editConfigFile(o.file, (edit) => {
    if (rawToken === undefined) edit.set([...OAUTH, 'refreshToken'], fileRef(tokenFile, dir));
    if (!client) return;
    if (edit.get([...OAUTH, 'clientId']) !== client.clientId) edit.set([...OAUTH, 'clientId'], client.clientId);
    const rawSecret = edit.get([...OAUTH, 'clientSecret']);
    const secretFile =
      secretFileOf(rawSecret, dir) ?? (rawSecret === undefined ? join(dir, SECRETS_DIR, 'gmail-client-secret') : undefined);
    if (secretFile) {
      writeSecretFile(secretFile, client.clientSecret);
      if (rawSecret === undefined) edit.set([...OAUTH, 'clientSecret'], fileRef(secretFile, dir));
      notes.push(`client secret stored in ${secretFile} (mode 0600)`);
    } else notes.push('hooks.gmail.oauth.clientSecret is set in the config and left as it is');
  });
  notes.push(`config written: ${o.file} (hooks.gmail.oauth)`);
  return { refreshTokenFile: tokenFile, notes };
}
