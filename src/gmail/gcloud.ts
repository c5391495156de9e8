/**
 * The `gcloud` commands for what `setup` cannot do itself: the Pub/Sub topic, the grant that lets
 * Gmail publish to it, and the push subscription that calls the push endpoint.
 */

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

export interface GcloudPlan {
  project: string;
  topic: string;
  subscription: string;
  /** The public URL that reaches the push path. */
  endpoint: string;
  /** Shell text that yields the push token (`$(cat 'file')`, `${ENV}`), never the token itself. */
  tokenShell: string | undefined;
}

export function gcloudCommands(p: GcloudPlan): string[] {
  const project = `--project=${shellQuote(p.project)}`;
  const endpoint = p.tokenShell ? `"${p.endpoint}${p.endpoint.includes('?') ? '&' : '?'}token=${p.tokenShell}"` : shellQuote(p.endpoint);
  return [
    `gcloud services enable gmail.googleapis.com pubsub.googleapis.com ${project}`,
    `gcloud pubsub topics create ${shellQuote(p.topic)} ${project}`,
    `gcloud pubsub topics add-iam-policy-binding ${shellQuote(p.topic)} ${project} --member=serviceAccount:${GMAIL_PUSH_ACCOUNT} --role=roles/pubsub.publisher`,
    `gcloud pubsub subscriptions create ${shellQuote(p.subscription)} ${project} --topic=${shellQuote(p.topic)} --push-endpoint=${endpoint} --ack-deadline=60`,
  ];
}
