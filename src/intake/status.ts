/**
 * The success status rule (docs/http.md): one wake answers 200, one agent action (or delivery)
 * `hooks.agentStatus` (202 unless configured 200), several actions (a fan-out) 202. What a request is answered and what a
 * dry run says it would be answered both come from here.
 */
export function successStatus(actions: readonly { kind: 'wake' | 'agent' | 'deliver' }[], agentStatus: 200 | 202): number {
  if (actions.length !== 1) return 202;
  return actions[0]!.kind === 'wake' ? 200 : agentStatus;
}
