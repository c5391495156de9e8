/**
 * The `command` agent provider: one process per run, no shell. The prompt
 * goes to standard input, the reply is standard output (trailing whitespace
 * removed). The process runs in its own process group, so a timeout or
 * shutdown stops the program and anything it started: SIGTERM first,
 * SIGKILL after `killGraceMs`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { PluginConfigError, type AgentProvider, type AgentRequest, type PluginContext } from 'hook-intake/plugin';
import type { CommandConfigValue } from './config.ts';
import { fillArg, renderInput } from './input.ts';

const STDERR_TAIL_CHARS = 2000;
const ERROR_TAIL_CHARS = 500;

/** The end of a program's stderr on one line: the last words are usually the reason. */
export function tailOf(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `…${flat.slice(flat.length - max + 1).trimStart()}` : flat;
}

/** Signals the child's whole process group; the group may already be gone. */
function signalGroup(child: ChildProcess, sig: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, sig);
  } catch {
    try {
      child.kill(sig);
    } catch {
      // already exited
    }
  }
}

export function createCommandProvider(config: CommandConfigValue, ctx: PluginContext): AgentProvider {
  const cwd = config.cwd ? resolve(ctx.configDir, config.cwd) : undefined;
  if (cwd) {
    let isDir = false;
    try {
      isDir = statSync(cwd).isDirectory();
    } catch {
      // reported below
    }
    if (!isDir) throw new PluginConfigError('cwd', `${cwd} is not a directory`);
  }
  const program = config.command[0]!;
  const live = new Set<ChildProcess>();

  function run(req: AgentRequest): Promise<{ text: string }> {
    req.signal.throwIfAborted();
    const argv = config.command.map((a) => fillArg(a, req));
    const env: Record<string, string | undefined> = {
      ...(config.inheritEnv ? ctx.env : {}),
      ...config.env,
      HOOK_INTAKE_RUN_ID: req.runId,
      HOOK_INTAKE_SESSION_KEY: req.sessionKey,
      HOOK_INTAKE_MODEL: req.model,
      HOOK_INTAKE_THINKING: req.thinking ?? '',
    };
    const started = ctx.clock();

    return new Promise((done, fail) => {
      const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
      live.add(child);
      const out: Buffer[] = [];
      let outBytes = 0;
      let errTail = '';
      let overflow = false;
      let settled = false;
      let grace: NodeJS.Timeout | undefined;

      const stop = () => {
        if (grace) return;
        signalGroup(child, 'SIGTERM');
        grace = setTimeout(() => signalGroup(child, 'SIGKILL'), config.killGraceMs);
      };
      const onAbort = () => stop();
      req.signal.addEventListener('abort', onAbort, { once: true });

      const finish = (err: Error | undefined, text?: string) => {
        if (settled) return;
        settled = true;
        live.delete(child);
        req.signal.removeEventListener('abort', onAbort);
        // the program is gone; a kill still pending would only hit an unrelated reused pid
        if (grace && child.exitCode !== null) clearTimeout(grace);
        ctx.logger.debug({ runId: req.runId, ms: ctx.clock() - started, ok: !err }, 'command finished');
        if (err) fail(err);
        else done({ text: text! });
      };

      child.stdout!.on('data', (b: Buffer) => {
        if (overflow) return;
        if (outBytes + b.length > config.maxOutputBytes) {
          overflow = true;
          out.length = 0;
          stop();
          return;
        }
        out.push(b);
        outBytes += b.length;
      });
      child.stderr!.on('data', (b: Buffer) => {
        errTail = (errTail + b.toString('utf8')).slice(-STDERR_TAIL_CHARS);
      });
      // a program that exits without reading its input closes the pipe; that is not an error here
      child.stdin!.on('error', () => undefined);
      child.stdin!.end(renderInput(config.input, req));

      child.on('error', (err: NodeJS.ErrnoException) => finish(new Error(`cannot start "${program}": ${err.code ?? err.message}`)));
      child.on('close', (code, signal) => {
        if (req.signal.aborted) return finish(req.signal.reason instanceof Error ? req.signal.reason : new Error('aborted'));
        if (overflow) return finish(new Error(`"${program}" wrote more than maxOutputBytes (${config.maxOutputBytes}) and was stopped`));
        const tail = tailOf(errTail, ERROR_TAIL_CHARS);
        const why = tail ? `: ${tail}` : '';
        if (code === 0) return finish(undefined, Buffer.concat(out, outBytes).toString('utf8').trimEnd());
        if (signal) return finish(new Error(`"${program}" was killed by ${signal}${why}`));
        return finish(new Error(`"${program}" exited with code ${code}${why}`));
      });
    });
  }

  return {
    run,
    stop() {
      for (const child of live) signalGroup(child, 'SIGKILL');
      live.clear();
    },
  };
}
