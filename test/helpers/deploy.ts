/**
 * Reading the files of deploy/ as their tools do, for the tests that check them against the code:
 * the Dockerfile's stages (WORKDIR, COPY, ENV, CMD) and a systemd unit's ExecStart and Environment.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.ts';

export interface Copy {
  /** The stage copied from (`--from=`), else undefined: the build context, the repository. */
  from: string | undefined;
  sources: string[];
  /** Where it goes: absolute, or relative to the stage's WORKDIR at that point. */
  dest: string;
  workdir: string;
}

export interface Stage {
  name: string | undefined;
  copies: Copy[];
  env: Record<string, string>;
  cmd: string[] | undefined;
  workdir: string;
}

/** Instructions one a line: continuation lines joined, comments and blank lines dropped. */
function instructions(text: string): string[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
}

/** `ENV A=1 B=2` (the form the Dockerfile uses). */
function envPairs(args: string): Record<string, string> {
  return Object.fromEntries([...args.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
}

export function dockerfileStages(file = join(ROOT, 'deploy/Dockerfile')): Stage[] {
  const stages: Stage[] = [];
  for (const line of instructions(readFileSync(file, 'utf8'))) {
    const [op, ...rest] = line.split(/\s+/);
    const args = line.slice(op!.length).trim();
    const stage = stages.at(-1);
    switch (op!.toUpperCase()) {
      case 'FROM':
        stages.push({ name: /\bAS\s+(\S+)/i.exec(args)?.[1], copies: [], env: {}, cmd: undefined, workdir: '/' });
        break;
      case 'WORKDIR':
        stage!.workdir = args;
        break;
      case 'COPY': {
        const from = rest.find((r) => r.startsWith('--from='))?.slice('--from='.length);
        const paths = rest.filter((r) => !r.startsWith('--'));
        stage!.copies.push({ from, sources: paths.slice(0, -1), dest: paths.at(-1)!, workdir: stage!.workdir });
        break;
      }
      case 'ENV':
        Object.assign(stage!.env, envPairs(args));
        break;
      case 'CMD':
        stage!.cmd = JSON.parse(args) as string[];
        break;
    }
  }
  return stages;
}

/** A systemd unit's ExecStart as words, and its `Environment=` assignments. */
export function systemdUnit(file: string): { execStart: string[]; env: Record<string, string> } {
  const lines = instructions(readFileSync(join(ROOT, file), 'utf8'));
  const execStart = lines
    .find((l) => l.startsWith('ExecStart='))!
    .slice('ExecStart='.length)
    .trim()
    .split(/\s+/);
  const env = Object.assign({}, ...lines.filter((l) => l.startsWith('Environment=')).map((l) => envPairs(l.slice('Environment='.length))));
  return { execStart, env };
}
