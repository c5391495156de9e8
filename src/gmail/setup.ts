/**
 * `webhooks gmail setup` without the CLI: writes the gmail keys into the config file (keeping the
 * rest of it), creates the tokens it needs as secret files, calls `users.watch` when OAuth
 * credentials exist, and returns the `gcloud` commands left for the operator: for a push
 * subscription, or with `mode: "pull"` for a pull subscription (docs/gmail.md, "Pull mode").
 */
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { dataDirTokens } from '../cli/tokens.ts';
import { loadConfig } from '../config/load.ts';
import type { Logger } from '../log.ts';
import { AccessTokens } from './access-token.ts';
import { GmailApi } from './api.ts';
import { editConfigFile, type ConfigEditor } from '../config/edit.ts';
import { gcloudCommands, PROJECT_PLACEHOLDER, projectFromEnvironment, resourcePath } from './gcloud.ts';
import { hookUrlOf } from './run.ts';
import { fileRef, newToken, SECRETS_DIR, secretFileOf, writeSecretFile } from '../config/secret-files.ts';
import { CLOUD_PLATFORM_SCOPE, PUBSUB_SCOPE } from './pubsub.ts';
import { GmailConfigError, gmailSection, hasCredentials, oauthCredentials, type Deps, type Gmail } from './settings.ts';
import { readState, stateFile, writeState } from './state.ts';

export interface SetupOptions {
  file: string;
  dataDir: string;
  account: string;
  project?: string;
  topic?: string;
  subscription?: string;
  /** `push` (the push endpoint) or `pull` (a pull subscription); unset keeps the config's. */
  mode?: 'push' | 'pull';
  /** The public URL that reaches the push path. */
  pushEndpoint?: string;
  label?: string;
  hookUrl?: string;
  deps: Deps;
  log: Logger;
  /** Where a project is looked for without `--project` (gcloud on its `PATH`, the variables); default the process's. */
  env?: Record<string, string | undefined>;
}

export interface SetupResult {
  /** What was done, one line each (no secret in them). */
  notes: string[];
  commands: string[];
}

const TOPIC = 'hook-intake-gmail';
const SUBSCRIPTION = { push: 'hook-intake-gmail-push', pull: 'hook-intake-gmail-pull' };

/** What the config edit decided, for the commands. */
interface Written {
  mode: 'push' | 'pull';
  /** Absent without a project (none given or found): the topic and subscription stay out of the config. */
  topic: Resource | undefined;
  names: { topic: string; subscription: string };
  tokenShell: string | undefined;
}

export async function runSetup(o: SetupOptions): Promise<SetupResult> {
  const notes: string[] = [];
  if (!existsSync(o.file)) {
    writeFileSync(o.file, ['.yaml', '.yml'].includes(extname(o.file).toLowerCase()) ? '' : '{\n}\n');
    notes.push(`created ${o.file}`);
  }
  let w!: Written;
  editConfigFile(o.file, (edit) => (w = writeGmail(edit, o, notes)));
  notes.push(`config written: ${o.file} (hooks.enabled, hooks.presets, hooks.gmail)`);

  const loaded = loadConfig({ file: o.file, dataDir: o.dataDir, tokenFallback: dataDirTokens(o.dataDir, false).fallback });
  const gmail = gmailSection(loaded.config);
  notes.push(...(await watchNow(o, gmail, w)));
  notes.push(`the gmail hook is posted to ${hookUrlOf(loaded.config)}`);
  const plan = { project: w.topic?.project, topic: w.names.topic, subscription: w.names.subscription };
  if (w.mode === 'pull') {
    notes.push(
      `pull mode: no public URL; the bridge pulls from ${w.names.subscription} with the mailbox's token, which needs the Pub/Sub scope (a refresh token from before pull mode needs "hook-intake webhooks gmail auth" again)`,
    );
    return { notes, commands: gcloudCommands({ ...plan, mode: 'pull', account: o.account }) };
  }
  const endpoint = o.pushEndpoint ?? `https://YOUR-PUBLIC-HOST${gmail.serve.path}`;
  if (!o.pushEndpoint)
    notes.push(
      `no --push-endpoint: replace https://YOUR-PUBLIC-HOST with the public address that reaches ${gmail.serve.bind}:${gmail.serve.port}${gmail.serve.path}`,
    );
  return { notes, commands: gcloudCommands({ ...plan, mode: 'push', endpoint, tokenShell: w.tokenShell }) };
}

/** Writes the keys setup owns into the config being edited. */
function writeGmail(edit: ConfigEditor, o: SetupOptions, notes: string[]): Written {
  const dir = dirname(o.file);
  const g = (path: string[]) => edit.get(['hooks', 'gmail', ...path]);
  const mode = o.mode ?? (g(['mode']) === 'pull' ? 'pull' : 'push');
  const oldTopic = typeof g(['topic']) === 'string' ? resourcePath(g(['topic']) as string, 'topics', undefined) : undefined;
  const given = o.topic ? resourcePath(o.topic, 'topics', undefined) : undefined;
  const project = o.project ?? given?.project ?? oldTopic?.project ?? foundProject(o.env ?? process.env, notes);
  const topicName = o.topic ?? oldTopic?.path ?? TOPIC;
  const subscriptionName = o.subscription ?? keptSubscription(g(['subscription']), mode) ?? SUBSCRIPTION[mode];
  let topic: Resource | undefined;
  let names = { topic: topicName, subscription: subscriptionName };
  if (project !== undefined) {
    const t = resourcePath(topicName, 'topics', project);
    if (!t) throw new GmailConfigError('--topic must be a name or projects/<project>/topics/<name>');
    const s = resourcePath(subscriptionName, 'subscriptions', t.project);
    if (!s) throw new GmailConfigError('--subscription must be a name or projects/<project>/subscriptions/<name>');
    topic = t;
    names = { topic: t.name, subscription: s.name };
    edit.set(['hooks', 'gmail', 'topic'], t.path);
    edit.set(['hooks', 'gmail', 'subscription'], s.path);
  } else {
    if (topicName.includes('/') || subscriptionName.includes('/'))
      throw new GmailConfigError('--topic and --subscription are names here (no project is known), or give --project');
    notes.push(
      `no Google Cloud project: no --project, no project in gcloud's config, GOOGLE_CLOUD_PROJECT and CLOUDSDK_CORE_PROJECT unset; ` +
        `hooks.gmail.topic and subscription are left unset: run setup again with --project ID, and put your project's id for ${PROJECT_PLACEHOLDER} in the commands below`,
    );
  }

  if (edit.get(['hooks', 'enabled']) !== true) edit.set(['hooks', 'enabled'], true);
  if (edit.get(['hooks', 'token']) === undefined) {
    // the token serve generated into the data dir, if it did, so running clients keep working
    const value = dataDirTokens(o.dataDir, false).fallback('hooks') ?? newToken();
    notes.push(`hook token written to ${secret(edit, ['hooks', 'token'], 'hook-token', value, dir)} (mode 0600)`);
  }
  edit.addToList(['hooks', 'presets'], 'gmail');
  edit.set(['hooks', 'gmail', 'account'], o.account);
  if (o.mode) edit.set(['hooks', 'gmail', 'mode'], o.mode);
  if (o.label) edit.set(['hooks', 'gmail', 'label'], o.label);
  if (o.hookUrl) edit.set(['hooks', 'gmail', 'hookUrl'], o.hookUrl);
  // pull mode needs no push token (Pub/Sub is called, it does not call)
  const tokenShell = mode === 'push' ? pushTokenShell(edit, dir, notes) : undefined;
  return { mode, topic, names, tokenShell };
}

/** The configured subscription, unless it is the other mode's default name (a mode switch gets its own). */
function keptSubscription(raw: unknown, mode: 'push' | 'pull'): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const other = SUBSCRIPTION[mode === 'push' ? 'pull' : 'push'];
  return raw === other || raw.endsWith(`/subscriptions/${other}`) ? undefined : raw;
}

/** Calls `users.watch` when the config has credentials; the lines that say what happened. */
async function watchNow(o: SetupOptions, gmail: Gmail, w: Written): Promise<string[]> {
  if (!w.topic) return ['users.watch waits for hooks.gmail.topic'];
  if (!hasCredentials(gmail))
    return [
      'no OAuth credentials yet: run "hook-intake webhooks gmail auth --client-secret FILE"; "gmail run" calls users.watch when it starts',
    ];
  const tokens = new AccessTokens(o.deps, gmail.tokenUrl, oauthCredentials(gmail));
  const api = new GmailApi(o.deps, gmail.apiBaseUrl, tokens);
  const notes: string[] = [];
  try {
    const r = await api.watch(w.topic.path, [gmail.label]);
    const file = stateFile(o.dataDir, o.account);
    const state = readState(file);
    if (!state.historyId && r.historyId) writeState(file, { ...state, historyId: r.historyId });
    notes.push(
      `users.watch: Gmail publishes changes of ${gmail.label} to ${w.topic.path}${r.expiration ? ` until ${new Date(Number(r.expiration)).toISOString()}` : ''}`,
    );
  } catch (err) {
    notes.push(
      `users.watch failed: ${(err as Error).message}; run the gcloud commands below, then "hook-intake webhooks gmail run" calls it again`,
    );
  }
  const scopes = tokens.scopes;
  if (w.mode === 'pull' && scopes && !scopes.includes(PUBSUB_SCOPE) && !scopes.includes(CLOUD_PLATFORM_SCOPE))
    notes.push('the stored refresh token lacks the Pub/Sub scope that pull mode needs: run "hook-intake webhooks gmail auth" again');
  return notes;
}

type Resource = NonNullable<ReturnType<typeof resourcePath>>;

/** The project of this machine's gcloud set-up or environment, noted with where it came from. */
function foundProject(env: Record<string, string | undefined>, notes: string[]): string | undefined {
  const found = projectFromEnvironment(env);
  if (found) notes.push(`project ${found.project} (from ${found.from})`);
  return found?.project;
}

/** Writes a new secret file under the secrets folder and points `path` at it; returns the file. */
function secret(edit: ConfigEditor, path: string[], name: string, value: string, dir: string): string {
  const file = join(dir, SECRETS_DIR, name);
  writeSecretFile(file, value);
  edit.set(path, fileRef(file, dir));
  return file;
}

/** Makes sure a push token exists; returns shell text that yields it (never the token). */
function pushTokenShell(edit: ConfigEditor, dir: string, notes: string[]): string | undefined {
  const path = ['hooks', 'gmail', 'pushToken'];
  const raw = edit.get(path);
  if (raw === undefined) {
    const file = secret(edit, path, 'gmail-push-token', newToken(), dir);
    notes.push(`push token written to ${file} (mode 0600)`);
    return `$(cat '${file}')`;
  }
  const file = secretFileOf(raw, dir);
  if (file) return `$(cat '${file}')`;
  const env = typeof raw === 'string' ? /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(raw)?.[1] : undefined;
  return env ? `\${${env}}` : '<hooks.gmail.pushToken>';
}
