/**
 * The `command` provider with real child processes: what the program reads
 * and sees, its answer, its failures, and that a timeout really ends it.
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../../test/helpers/cli.ts';
import { callAsRun, configIssues, type Generation } from '../../test/helpers/plugin-tests.ts';
import { agentRequest, captureLogger, testGeneration } from '../../test/helpers/runtime.ts';
import { renderInput } from './input.ts';
import { tailOf } from './provider.ts';

const NODE = process.execPath;
const dir = mkdtempSync(join(tmpdir(), 'command-provider-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A generation whose `cli` provider runs `node -e <script> …args`. */
const gen = (script: string, extra: Record<string, unknown> = {}, env: Record<string, string> = {}): Generation =>
  testGeneration(
    { agents: { defaults: { model: 'cli/default' }, providers: { cli: { type: 'command', command: [NODE, '-e', script], ...extra } } } },
    { env },
  );
const provider = (g: Generation) => g.providers.get('cli')!;

const ECHO_STDIN = 'let s="";process.stdin.setEncoding("utf8").on("data",d=>s+=d).on("end",()=>process.stdout.write(s))';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('command provider', () => {
  describe('success', () => {
    it('writes the prompt to stdin and returns stdout without trailing whitespace', async () => {
      const reply = await provider(gen(`${ECHO_STDIN.replace('process.stdout.write(s)', 'process.stdout.write("got: "+s+"\\n\\n")')}`)).run(
        agentRequest({ messages: [{ role: 'user', content: 'summarise this' }] }),
      );
      expect(reply).toEqual({ text: 'got: summarise this' });
    });

    it('replaces {model}, {sessionKey}, {runId} and {thinking} in argv, and sets HOOK_INTAKE_* variables, env and cwd', async () => {
      const script =
        'const [,...a]=process.argv;process.stdout.write(JSON.stringify({a,cwd:process.cwd(),e:Object.fromEntries(Object.entries(process.env).filter(([k])=>k.startsWith("HOOK_INTAKE_")||k==="EXTRA"||k==="INHERITED"))}))';
      const g = testGeneration(
        {
          agents: {
            defaults: { model: 'cli/default' },
            providers: {
              cli: {
                type: 'command',
                command: [NODE, '-e', script, '--', '--model={model}', '{sessionKey}', '{runId}', '{thinking}'],
                cwd: dir,
                env: { EXTRA: 'x' },
              },
            },
          },
        },
        { env: { INHERITED: 'yes' } },
      );
      const reply = await provider(g).run(agentRequest({ model: 'sonnet', sessionKey: 'hook:k', runId: 'r-9', thinking: 'high' }));
      expect(JSON.parse(reply.text)).toEqual({
        a: ['--model=sonnet', 'hook:k', 'r-9', 'high'],
        cwd: realpathSync(dir),
        e: {
          EXTRA: 'x',
          INHERITED: 'yes',
          HOOK_INTAKE_RUN_ID: 'r-9',
          HOOK_INTAKE_SESSION_KEY: 'hook:k',
          HOOK_INTAKE_MODEL: 'sonnet',
          HOOK_INTAKE_THINKING: 'high',
        },
      });
    });

    it('keeps the service environment away from the program with inheritEnv: false', async () => {
      const reply = await provider(
        gen('process.stdout.write(String(process.env.INHERITED))', { inheritEnv: false }, { INHERITED: 'yes' }),
      ).run(agentRequest());
      expect(reply.text).toBe('undefined');
    });

    it('gives a stateless program the earlier turns (transcript input)', async () => {
      const messages = [
        { role: 'user' as const, content: 'Q1' },
        { role: 'assistant' as const, content: 'A1' },
        { role: 'user' as const, content: 'Q2' },
      ];
      const reply = await provider(gen(ECHO_STDIN)).run(agentRequest({ messages }));
      expect(reply.text).toBe('The conversation so far, oldest first:\n\n[user]\nQ1\n\n[assistant]\nA1\n\nThe new message:\n\nQ2');
    });

    it.each([
      ['message', 'Q2'],
      [
        'json',
        JSON.stringify({
          runId: 'run-1',
          sessionKey: 'hook:test',
          model: 'default',
          thinking: null,
          instructions: null,
          messages: [
            { role: 'user', content: 'Q1' },
            { role: 'assistant', content: 'A1' },
            { role: 'user', content: 'Q2' },
          ],
        }),
      ],
    ])('input %s', (mode, expected) => {
      const messages = [
        { role: 'user' as const, content: 'Q1' },
        { role: 'assistant' as const, content: 'A1' },
        { role: 'user' as const, content: 'Q2' },
      ];
      expect(renderInput(mode as 'message' | 'json', agentRequest({ messages })).trimEnd()).toBe(expected);
    });

    it('logs run id and timing, never the prompt or the reply', async () => {
      const { logger, text } = captureLogger('trace');
      const g = testGeneration(
        { agents: { defaults: { model: 'cli/default' }, providers: { cli: { type: 'command', command: [NODE, '-e', ECHO_STDIN] } } } },
        { logger },
      );
      const reply = await provider(g).run(agentRequest({ runId: 'run-logged', messages: [{ role: 'user', content: 'PRIVATE-PROMPT' }] }));
      expect(reply.text).toBe('PRIVATE-PROMPT');
      expect(text()).toContain('run-logged');
      expect(text()).not.toContain('PRIVATE-PROMPT');
    });

    it('does not fail when the program ignores its input', async () => {
      const reply = await provider(gen('process.stdout.write("ignored")')).run(
        agentRequest({ messages: [{ role: 'user', content: 'x'.repeat(1_000_000) }] }),
      );
      expect(reply.text).toBe('ignored');
    });
  });

  describe('failures', () => {
    it('reports a non-zero exit with the code and the tail of stderr', async () => {
      const script = 'process.stderr.write("noise ".repeat(500)+"\\nError: model not found\\n");process.exit(3)';
      const err = (await provider(gen(script))
        .run(agentRequest())
        .catch((e: Error) => e)) as Error;
      expect(err.message).toMatch(/^"[^"]+" exited with code 3: ….*noise Error: model not found$/);
      expect(err.message.length).toBeLessThan(600);
    });

    it('reports a program killed by a signal', async () => {
      const err = (await provider(gen('process.kill(process.pid,"SIGSEGV")'))
        .run(agentRequest())
        .catch((e: Error) => e)) as Error;
      expect(err.message).toMatch(/was killed by SIGSEGV/);
    });

    it('reports a program that cannot be started', async () => {
      const g = testGeneration({
        agents: { defaults: { model: 'cli/x' }, providers: { cli: { type: 'command', command: ['/nonexistent/agent-cli'] } } },
      });
      await expect(provider(g).run(agentRequest())).rejects.toThrow('cannot start "/nonexistent/agent-cli": ENOENT');
    });

    it('stops a program that writes more than maxOutputBytes', async () => {
      const script = `require("fs").writeFileSync(${JSON.stringify(join(dir, 'flood.pid'))},String(process.pid));setInterval(()=>process.stdout.write("z".repeat(65536)),1)`;
      await expect(provider(gen(script, { maxOutputBytes: 100_000 })).run(agentRequest())).rejects.toThrow(
        /more than maxOutputBytes \(100000\) and was stopped/,
      );
      const pid = Number(readFileSync(join(dir, 'flood.pid'), 'utf8'));
      await until(() => !alive(pid));
    });

    it('times out at the run deadline: SIGTERM, then SIGKILL for a program that ignores it', async () => {
      const pidFile = join(dir, 'stubborn.pid');
      const script = `process.on("SIGTERM",()=>{});require("fs").writeFileSync(${JSON.stringify(pidFile)},String(process.pid));setInterval(()=>{},1000)`;
      const g = gen(script, { killGraceMs: 200 });
      const r = await callAsRun(g, {
        runId: 'r',
        sessionKey: 'hook:t',
        model: 'cli/default',
        thinking: null,
        messages: [{ role: 'user', content: 'hang' }],
        timeoutMs: 500,
      });
      expect(r).toEqual({ status: 'timeout', error: 'timed out after 0.5s' });
      const pid = Number(readFileSync(pidFile, 'utf8'));
      await until(() => !alive(pid));
    });

    it('ends the programs it started, children included, when closed', async () => {
      const pidFile = join(dir, 'child.pid');
      // the program starts a grandchild and waits; both belong to one process group
      const script = `const c=require("child_process").spawn(process.execPath,["-e","setInterval(()=>{},1000)"],{stdio:"ignore"});require("fs").writeFileSync(${JSON.stringify(pidFile)},String(c.pid));setInterval(()=>{},1000)`;
      const p = provider(gen(script));
      const running = p.run(agentRequest()).catch((e: Error) => e);
      const grandchild = await until(() => {
        try {
          return Number(readFileSync(pidFile, 'utf8')) || undefined;
        } catch {
          return undefined;
        }
      });
      await p.stop!();
      expect(await running).toBeInstanceOf(Error);
      await until(() => !alive(grandchild));
    });
  });

  describe('config', () => {
    const issuesOf = (slice: Record<string, unknown>) =>
      configIssues(() => testGeneration({ agents: { defaults: { model: 'cli/m' }, providers: { cli: { type: 'command', ...slice } } } }));

    it.each([
      [{ command: [] }, 'agents.providers.cli.command: must NOT have fewer than 1 items'],
      [{}, 'agents.providers.cli: missing required key "command"'],
      [{ command: ['x'], cwd: '/nonexistent/dir' }, 'agents.providers.cli.cwd: /nonexistent/dir is not a directory'],
      [{ command: ['x'], input: 'xml' }, 'agents.providers.cli.input: must be one of "transcript", "message", "json"'],
      [{ command: ['x'], env: { 'BAD-NAME': '1' } }, 'agents.providers.cli.env: has an invalid key "BAD-NAME"'],
    ])('refuses %j naming the key', (slice, message) => {
      expect(issuesOf(slice)).toContain(message);
    });
  });

  it('tailOf keeps the end of a long text', () => {
    expect(tailOf('a b c d e f', 5)).toBe('…e f');
    expect(tailOf('  short\n', 50)).toBe('short');
  });
});
