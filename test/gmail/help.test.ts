/** `hook-intake webhooks gmail …` help and unknown commands, through the real CLI. */
import { describe, expect, it } from 'vitest';
import { AUTH_OPTIONS, RUN_OPTIONS, SETUP_OPTIONS } from '../../src/cli/gmail.ts';
import { runCli } from '../helpers/cli.ts';

describe('hook-intake webhooks gmail --help', () => {
  it.each([
    ['auth', AUTH_OPTIONS],
    ['setup', SETUP_OPTIONS],
    ['run', RUN_OPTIONS],
  ] as const)('%s --help lists every flag', async (cmd, options) => {
    const r = await runCli(['webhooks', 'gmail', cmd, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^usage: hook-intake webhooks gmail ${cmd} `));
    for (const name of Object.keys(options)) expect(r.stdout).toContain(`--${name}`);
  });

  it('the top-level help names the command; an unknown one is an error', async () => {
    const [top, unknown] = await Promise.all([runCli(['--help']), runCli(['webhooks', 'outlook', 'run'])]);
    expect(top.stdout).toContain('webhooks gmail auth|setup|run');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown command "outlook run"');
  });
});
