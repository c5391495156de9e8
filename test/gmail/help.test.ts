/** `hook-intake webhooks gmail …` help and unknown commands. */
import { describe, expect, it } from 'vitest';
import { AUTH_OPTIONS, GMAIL_COMMAND_HELP, RUN_OPTIONS, SETUP_OPTIONS } from '../../src/cli/gmail.ts';
import { runInProcess } from '../helpers/cli.ts';

describe('hook-intake webhooks gmail --help', () => {
  it.each([
    ['auth', AUTH_OPTIONS],
    ['setup', SETUP_OPTIONS],
    ['run', RUN_OPTIONS],
  ] as const)('%s --help lists every flag', (cmd, options) => {
    const help = GMAIL_COMMAND_HELP[cmd];
    expect(help).toMatch(new RegExp(`^usage: hook-intake webhooks gmail ${cmd} `));
    for (const name of Object.keys(options)) expect(help).toContain(`--${name}`);
  });

  // in this process, one at a time (runInProcess() captures the process's output); test/cli/help.test.ts runs the real CLI
  it('through the CLI: a command prints its help, the top level names the commands, an unknown one is an error', async () => {
    const run = await runInProcess(['webhooks', 'gmail', 'run', '--help']);
    const top = await runInProcess(['--help']);
    const unknown = await runInProcess(['webhooks', 'outlook', 'run']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(GMAIL_COMMAND_HELP.run);
    expect(top.stdout).toContain('webhooks gmail auth|setup|run');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown command "outlook run"');
  });
});
