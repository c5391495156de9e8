/**
 * `webhooks gmail run` without the CLI: checks the config, starts the push endpoint, renews the
 * watch. Everything outside (Google, the hook, time) comes through `deps`.
 */
import type { AddressInfo } from 'node:net';
import type { Config } from '../config/schema.ts';
import type { Logger } from '../log.ts';
import { AccessTokens } from './access-token.ts';
import { GmailApi } from './api.ts';
import { Bridge } from './bridge.ts';
import { PushAuth } from './push-auth.ts';
import { pushServer } from './push-server.ts';
import { WatchRenewal } from './renew.ts';
import { GmailConfigError, gmailSection, oauthCredentials, required, type Deps } from './settings.ts';
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
  /** `http://bind:port` + the push path. */
  url: string;
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

export async function startGmailRun(opts: RunOptions): Promise<RunningBridge> {
  const { config, deps, log } = opts;
  const g = gmailSection(config);
  const account = required(g, 'account', 'to know which mailbox to watch');
  const topic = required(g, 'topic', 'for users.watch (projects/<project>/topics/<name>)');
  if (!config.hooks.token)
    throw new GmailConfigError('hooks.token is required to post to the gmail hook (or start serve once to generate it)');
  if (!g.pushToken && !(g.push?.audience && g.push.serviceAccountEmail)) {
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

  const auth = new PushAuth(deps, {
    pushToken: g.pushToken,
    audience: g.push?.audience,
    serviceAccountEmail: g.push?.serviceAccountEmail,
    jwksUrl: g.jwksUrl,
  });
  const server = pushServer(g.serve.path, auth, bridge, log);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? g.serve.port, g.serve.bind, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}${g.serve.path}`,
    bridge,
    renewal,
    tokens,
    close: async () => {
      renewal.stop();
      server.closeIdleConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
