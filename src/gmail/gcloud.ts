/**
 * The `gcloud` commands for what `setup` cannot do itself: the Pub/Sub topic, the grant that lets
 * Gmail publish to it, and the subscription: a push subscription that calls the push endpoint, or
 * (pull mode) a pull subscription and the grant that lets the mailbox's account pull from it; and
 * the project they are for when `--project` is not given (docs/gmail.md, "2. setup").
 */
import { spawnSync } from 'node:child_process';

export const GMAIL_PUSH_ACCOUNT = 'gmail-api-push@system.gserviceaccount.com';

/** `projects/p/topics/t` → `{project: p, name: t}`; a bare name takes `project`. */
export function resourcePath(
  value: string,
  kind: 'topics' | 'subscriptions',
  project: string | undefined,
): { project: string; name: string; path: string } | undefined {
  const m = new RegExp(`^projects/([^/]+)/${kind}/([^/]+)$`).exec(value);
  if (m) return { project: m[1]!, name: m[2]!, path: value };
  if (!project || value.includes('/')) return undefined;
  return { project, name: value, path: `projects/${project}/${kind}/${value}` };
}

const shellQuote = (s: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** Where a project id was found, for setup to say. */
export interface FoundProject {
  project: string;
  from: string;
}

const PROJECT_VARIABLES = ['GOOGLE_CLOUD_PROJECT', 'CLOUDSDK_CORE_PROJECT'] as const;

/**
 * The project of this machine's Google Cloud set-up: `gcloud config get-value project` when `gcloud`
 * is on the `PATH` of `env` and has one, else `GOOGLE_CLOUD_PROJECT`, else `CLOUDSDK_CORE_PROJECT`.
 */
export function projectFromEnvironment(env: Record<string, string | undefined>): FoundProject | undefined {
  const r = spawnSync('gcloud', ['config', 'get-value', 'project'], {
    env,
    encoding: 'utf8',
    timeout: 30_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (!r.error && r.status === 0) {
    // gcloud prints nothing, or "(unset)", when no project is set
    const value = r.stdout.trim().split('\n').at(-1)?.trim();
    if (value && value !== '(unset)' && /^[^\s/]+$/.test(value)) return { project: value, from: 'gcloud config get-value project' };
  }
  for (const name of PROJECT_VARIABLES) {
    const value = env[name]?.trim();
    if (value) return { project: value, from: name };
  }
  return undefined;
}

/** What `--project` shows in the commands when no project was found: the operator puts theirs in. */
export const PROJECT_PLACEHOLDER = '<project-id>';

export type GcloudPlan = {
  /** Absent: no project is known, and the commands carry `<project-id>`. */
  project: string | undefined;
  topic: string;
  subscription: string;
} & (
  | {
      mode: 'push';
      /** The public URL that reaches the push path. */
      endpoint: string;
      /** Shell text that yields the push token (`$(cat 'file')`, `${ENV}`), never the token itself. */
      tokenShell: string | undefined;
    }
  | {
      mode: 'pull';
      /** The mailbox: its account pulls with its own OAuth token. */
      account: string;
    }
);

export function gcloudCommands(p: GcloudPlan): string[] {
  const project = `--project=${p.project === undefined ? PROJECT_PLACEHOLDER : shellQuote(p.project)}`;
  const sub = shellQuote(p.subscription);
  const common = [
    `gcloud services enable gmail.googleapis.com pubsub.googleapis.com ${project}`,
    `gcloud pubsub topics create ${shellQuote(p.topic)} ${project}`,
    `gcloud pubsub topics add-iam-policy-binding ${shellQuote(p.topic)} ${project} --member=serviceAccount:${GMAIL_PUSH_ACCOUNT} --role=roles/pubsub.publisher`,
  ];
  if (p.mode === 'pull')
    return [
      ...common,
      `gcloud pubsub subscriptions create ${sub} ${project} --topic=${shellQuote(p.topic)} --ack-deadline=60`,
      `gcloud pubsub subscriptions add-iam-policy-binding ${sub} ${project} --member=${shellQuote(`user:${p.account}`)} --role=roles/pubsub.subscriber`,
    ];
  const endpoint = p.tokenShell ? `"${p.endpoint}${p.endpoint.includes('?') ? '&' : '?'}token=${p.tokenShell}"` : shellQuote(p.endpoint);
  return [
    ...common,
    `gcloud pubsub subscriptions create ${sub} ${project} --topic=${shellQuote(p.topic)} --push-endpoint=${endpoint} --ack-deadline=60`,
  ];
}
