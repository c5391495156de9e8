/**
 * `webhooks gmail run` without the CLI: checks the config, starts the push endpoint (or, in pull
 * mode, the pull loop), renews the watch. Everything outside (Google, the hook, time) comes
 * through `deps`.
 */
import type { AddressInfo } from 'node:net';
import type { Config } from '../config/schema.ts';
import type { Logger } from '../log.ts';
import { AccessTokens, OAuthError } from './access-token.ts';
import { GmailApi } from './api.ts';
import { Bridge } from './bridge.ts';
import { resourcePath } from './gcloud.ts';
import { PullLoop } from './pull.ts';
import { CLOUD_PLATFORM_SCOPE, PUBSUB_SCOPE, PubSubApi } from './pubsub.ts';
import { PushAuth } from './push-auth.ts';
import { pushServer } from './push-server.ts';
import { WatchRenewal } from './renew.ts';
import { GmailConfigError, gmailSection, oauthCredentials, required, type Deps, type Gmail } from './settings.ts';
import { stateFile } from './state.ts';

export interface RunOptions {
  config: Config;
  dataDir: string;
  deps: Deps;
  log: Logger;
  /** Overrides `hooks.gmail.serve.port` (0: any free port). */
  port?: number;
}

export interface RunningBridge {
  mode: 'push' | 'pull';
  /** Push mode: `http://bind:port` + the push path. */
  url?: string;
  /** Pull mode: the subscription's full name. */
  subscription?: string;
  /** Pull mode: the loop. */
  pull?: PullLoop;
  bridge: Bridge;
  renewal: WatchRenewal;
  tokens: AccessTokens;
  close(): Promise<void>;
}

/** The hook URL: `hooks.gmail.hookUrl`, else the local service's gmail hook. */
export function hookUrlOf(config: Config): string {
  const g = gmailSection(config);
  if (g.hookUrl) return g.hookUrl;
  const host = config.gateway.bind === '0.0.0.0' || config.gateway.bind === '::' ? '127.0.0.1' : config.gateway.bind;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.gateway.port}${config.hooks.path}/gmail`;
}

/** `hooks.gmail.subscription` as `projects/<p>/subscriptions/<s>` (a bare name is in the topic's project). */
export function pullSubscription(g: Gmail, topic: string): string {
  const name = required(g, 'subscription', "in pull mode (projects/<project>/subscriptions/<name>, or a name in the topic's project)");
  const found = resourcePath(name, 'subscriptions', resourcePath(topic, 'topics', undefined)?.project);
  if (!found)
    throw new GmailConfigError(
      'hooks.gmail.subscription must be projects/<project>/subscriptions/<name>, or a name when hooks.gmail.topic is projects/<project>/topics/<name>',
    );
  return found.path;
}

export async function startGmailRun(opts: RunOptions): Promise<RunningBridge> {
  const { config, deps, log } = opts;
  const g = gmailSection(config);
  const account = required(g, 'account', 'to know which mailbox to watch');
  const topic = required(g, 'topic', 'for users.watch (projects/<project>/topics/<name>)');
  if (!config.hooks.token)
    throw new GmailConfigError('hooks.token is required to post to the gmail hook (or start serve once to generate it)');
  const subscription = g.mode === 'pull' ? pullSubscription(g, topic) : undefined;
  if (g.mode === 'push' && !g.pushToken && !(g.push?.audience && g.push.serviceAccountEmail)) {
    throw new GmailConfigError(
      'hooks.gmail.pushToken, or both hooks.gmail.push.audience and hooks.gmail.push.serviceAccountEmail, are required to authenticate pushes',
    );
  }
  const tokens = new AccessTokens(deps, g.tokenUrl, oauthCredentials(g));
  const api = new GmailApi(deps, g.apiBaseUrl, tokens);
  const bridge = new Bridge(
    deps,
    api,
    {
      account,
      label: g.label,
      includeBody: g.includeBody,
      maxBytes: g.maxBytes,
      hookUrl: hookUrlOf(config),
      hookToken: config.hooks.token,
      stateFile: stateFile(opts.dataDir, account),
    },
    log,
  );
  const renewal = new WatchRenewal(deps, api, topic, g.label, g.renewEveryMinutes * 60_000, log, (h) => bridge.baseline(h));
  await renewal.start();
  let started: Started;
  try {
    started = subscription ? await startPull(deps, g, tokens, bridge, subscription, log) : await startPush(deps, g, bridge, log, opts.port);
  } catch (err) {
    renewal.stop();
    throw err;
  }
  return {
    ...started,
    bridge,
    renewal,
    tokens,
    close: async () => {
      renewal.stop();
      await started.close();
    },
  };
}

type Started = Pick<RunningBridge, 'mode' | 'url' | 'subscription' | 'pull' | 'close'>;

async function startPush(deps: Deps, g: Gmail, bridge: Bridge, log: Logger, port: number | undefined): Promise<Started> {
  const auth = new PushAuth(deps, {
    pushToken: g.pushToken,
    audience: g.push?.audience,
    serviceAccountEmail: g.push?.serviceAccountEmail,
    jwksUrl: g.jwksUrl,
  });
  const server = pushServer(g.serve.path, auth, bridge, log);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port ?? g.serve.port, g.serve.bind, () => resolve());
  });
  const { address, port: bound } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    mode: 'push',
    url: `http://${host}:${bound}${g.serve.path}`,
    close: async () => {
      server.closeIdleConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function startPull(deps: Deps, g: Gmail, tokens: AccessTokens, bridge: Bridge, subscription: string, log: Logger): Promise<Started> {
  await checkPubSubScope(tokens);
  const loop = new PullLoop(
    deps,
    new PubSubApi(deps, g.pubsubBaseUrl, tokens),
    bridge,
    { subscription, maxMessages: g.pull.maxMessages },
    log,
  );
  // between pulls the loop waits on unref'd timers; this keeps the process up until close
  const keepAlive = setInterval(() => undefined, 2 ** 30);
  loop.start();
  return {
    mode: 'pull',
    subscription,
    pull: loop,
    close: async () => {
      await loop.stop();
      clearInterval(keepAlive);
    },
  };
}

/**
 * A refresh token granted before pull mode was chosen carries Gmail's scope only: said at start,
 * rather than as a 403 on every pull. Skipped when the token endpoint is unreachable now (the loop
 * retries) or names no scopes.
 */
async function checkPubSubScope(tokens: AccessTokens): Promise<void> {
  try {
    await tokens.get();
  } catch (err) {
    if (err instanceof OAuthError && err.permanent) throw err;
    return;
  }
  const s = tokens.scopes;
  if (s && !s.includes(PUBSUB_SCOPE) && !s.includes(CLOUD_PLATFORM_SCOPE))
    throw new GmailConfigError(
      `the refresh token was granted without the Pub/Sub scope (${PUBSUB_SCOPE}) that hooks.gmail.mode "pull" needs: run "hook-intake webhooks gmail auth" again`,
    );
}
