/**
 * The benchmark scenarios, as data. Adding one is one entry: the request
 * (path, body, headers), the load (connections), the hook-intake config it
 * needs (merged into the base config), files written next to that config
 * (transforms), the feature it depends on, and the targets it is held to.
 */

export interface Targets {
  /** Minimum CPU ratio: bare server CPU per request ÷ hook-intake's. */
  cpuRatio?: number;
  /** Maximum p99 latency in milliseconds. */
  p99Ms?: number;
  /** Maximum peak RSS in MB under load. */
  rssMb?: number;
}

export interface Scenario {
  /** Short id, used by `--only`. */
  id: string;
  /** Row label in the table. */
  label: string;
  /** Request path on both servers (the bare one ignores it). */
  path: string;
  body: string;
  contentType?: string;
  headers?: Record<string, string>;
  connections: number;
  /** The status hook-intake must answer; checked once before measuring. */
  expectStatus: number;
  /** Merged into hook-intake's base config (objects merge, arrays and values replace). */
  config?: Record<string, unknown>;
  /** Files written relative to the config file's directory, e.g. transforms. */
  files?: Record<string, string>;
  /** A feature the server may not have yet; without it the scenario is skipped with the reason. */
  requires?: 'mappings';
  targets?: Targets;
}

const WAKE = JSON.stringify({
  text: 'Deploy finished: api-gateway v2.14.3 rolled out to eu-west-1, 12/12 pods healthy, p95 latency 41 ms.',
});

const WAKE_NEXT = JSON.stringify({ ...JSON.parse(WAKE), mode: 'next-heartbeat' });

const AGENT = JSON.stringify({
  message: 'Disk usage on db-3 is at 91% and rising about 2% per hour since 09:00 UTC. Summarise the risk and suggest the next step.',
  name: 'Monitoring',
});

/** An agent message that makes the whole body 100 KiB. */
function agentBody100k(): string {
  const envelope = { message: '', name: 'Bulk import', deliver: false, wakeMode: 'next-heartbeat' };
  const room = 100 * 1024 - JSON.stringify(envelope).length;
  const line = 'row 0000: order shipped to warehouse 7, tracking pending, carrier notified; ';
  let message = '';
  for (let i = 0; message.length < room; i++) message += line.replace('0000', String(i).padStart(4, '0'));
  return JSON.stringify({ ...envelope, message: message.slice(0, room) });
}

/** A trimmed GitHub `push` delivery: the shape a mapped hook with templates is built for. */
const GITHUB_PUSH = JSON.stringify({
  ref: 'refs/heads/main',
  before: '6113728f27ae82c7b1a177c8d03f9e96e0adf246',
  after: '0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c',
  repository: { id: 1296269, name: 'hello-world', full_name: 'octo-org/hello-world', private: false, default_branch: 'main' },
  pusher: { name: 'octocat', email: 'octocat@example.com' },
  sender: { login: 'octocat', id: 1, type: 'User' },
  head_commit: {
    id: '0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c',
    message: 'Fix the retry budget of the outbox',
    timestamp: '2025-11-20T10:12:00Z',
    author: { name: 'Octo Cat', email: 'octocat@example.com', username: 'octocat' },
    added: [],
    removed: [],
    modified: ['src/runtime/outbox.ts'],
  },
  commits: Array.from({ length: 3 }, (_, i) => ({
    id: `${i}d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c`.slice(0, 40),
    message: `Commit ${i + 1} of the push`,
    author: { name: 'Octo Cat', email: 'octocat@example.com' },
    modified: ['README.md'],
  })),
});

const ALERT = JSON.stringify({
  alert: { status: 'firing', severity: 'critical', title: 'db-3 disk above 90%', instance: 'db-3:9100', startsAt: '2025-11-20T09:00:00Z' },
  labels: { team: 'storage', region: 'eu-west-1' },
});

/** A TypeScript transform (loaded with type stripping by the server), as an operator would write one. */
const ALERT_TRANSFORM = `interface Alert {
  status: string;
  severity: string;
  title: string;
  instance: string;
}

export default function transform(input: { payload: { alert: Alert; labels: Record<string, string> } }) {
  const { alert, labels } = input.payload;
  if (alert.status === 'resolved') return null;
  return { kind: 'wake' as const, text: \`[\${alert.severity}] \${alert.title} on \${alert.instance} (team \${labels.team ?? 'unknown'})\` };
}
`;

/**
 * A closed loop accepts agent requests faster than the runner finishes them;
 * past the default cap of 10,000 queued runs the rest would be cheap 503s. The
 * bench lifts the cap and lets each round wait until the runner has drained,
 * so every request is accepted and its run's CPU is counted.
 */
const UNCAPPED_RUNS = { hooks: { maxQueuedRuns: 10_000_000 } };

/**
 * `agent` delivers each reply to the console channel. A run's `channel: "last"` needs a main route,
 * which a fresh store has not learnt yet: without `session.defaultRoute` every reply would be skipped
 * and the scenario would leave the outbox out.
 */
const DELIVERED_RUNS = { ...UNCAPPED_RUNS, session: { defaultRoute: { channel: 'console' } } };

/**
 * An agent provider whose runs never finish on their own (they end when the
 * server shuts down): with one run at a time, every other request stays
 * queued, so a round measures the 202 path alone, with no run work beside it.
 */
const HOLD_PLUGIN = `import { definePlugin, Type } from 'hook-intake/plugin';

export default definePlugin({
  name: 'hold',
  agents: {
    hold: {
      configSchema: Type.Object({ type: Type.Literal('hold') }, { additionalProperties: false }),
      create: () => ({
        run: (req) => new Promise((_resolve, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason))),
      }),
    },
  },
});
`;

const HELD_RUNS = {
  plugins: ['./plugins/hold.ts'],
  agents: { defaults: { model: 'hold/held', maxConcurrent: 1 }, providers: { hold: { type: 'hold' } } },
  hooks: { maxQueuedRuns: 10_000_000 },
};

export const SCENARIOS: Scenario[] = [
  {
    id: 'wake',
    label: 'wake',
    path: '/hooks/wake',
    body: WAKE,
    connections: 50,
    expectStatus: 200,
    targets: { cpuRatio: 0.45, p99Ms: 10, rssMb: 120 },
  },
  // the same request without its heartbeat: the cost of intake alone
  {
    id: 'wake-next',
    label: 'wake, mode next-heartbeat',
    path: '/hooks/wake',
    body: WAKE_NEXT,
    connections: 50,
    expectStatus: 200,
    targets: { cpuRatio: 0.45, p99Ms: 10, rssMb: 120 },
  },
  {
    id: 'wake-200',
    label: 'wake',
    path: '/hooks/wake',
    body: WAKE,
    connections: 200,
    expectStatus: 200,
    targets: { cpuRatio: 0.45, rssMb: 120 },
  },
  {
    id: 'agent',
    label: 'agent (runs by echo)',
    path: '/hooks/agent',
    body: AGENT,
    connections: 50,
    expectStatus: 202,
    config: DELIVERED_RUNS,
    targets: { cpuRatio: 0.4, p99Ms: 10, rssMb: 120 },
  },
  // the same request, with the runs held back: what accepting an agent request costs
  {
    id: 'agent-intake',
    label: 'agent, 202 path only (runs held)',
    path: '/hooks/agent',
    body: AGENT,
    connections: 50,
    expectStatus: 202,
    config: HELD_RUNS,
    files: { 'plugins/hold.ts': HOLD_PLUGIN },
    targets: { cpuRatio: 0.4, p99Ms: 10, rssMb: 120 },
  },
  {
    id: 'agent-100k',
    label: 'agent, 100 KiB body',
    path: '/hooks/agent',
    body: agentBody100k(),
    connections: 50,
    expectStatus: 202,
    config: UNCAPPED_RUNS,
    targets: { rssMb: 120 },
  },
  {
    id: 'mapped-template',
    label: 'mapped hook, templates',
    path: '/hooks/github',
    body: GITHUB_PUSH,
    headers: { 'X-GitHub-Event': 'push' },
    connections: 50,
    expectStatus: 200,
    requires: 'mappings',
    config: {
      hooks: {
        mappings: [
          {
            id: 'github-push',
            match: { path: 'github', headers: { 'x-github-event': 'push' } },
            action: 'wake',
            textTemplate: 'Push to {{repository.full_name}} ({{ref}}) by {{pusher.name}}: {{head_commit.message}}',
          },
        ],
      },
    },
    targets: { cpuRatio: 0.4, p99Ms: 10, rssMb: 120 },
  },
  {
    id: 'mapped-transform',
    label: 'mapped hook, TS transform',
    path: '/hooks/alerts',
    body: ALERT,
    connections: 50,
    expectStatus: 200,
    requires: 'mappings',
    config: { hooks: { mappings: [{ id: 'alerts', match: { path: 'alerts' }, action: 'wake', transform: { module: 'alert.ts' } }] } },
    files: { 'transforms/alert.ts': ALERT_TRANSFORM },
    targets: { cpuRatio: 0.35, p99Ms: 10, rssMb: 120 },
  },
];
