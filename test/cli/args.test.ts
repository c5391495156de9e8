/**
 * Where the data directory is (docs/configuration.md, data directory): `--data`, else
 * `$HOOK_INTAKE_DATA`, else `data` next to the config file, else `./data` on the embedded defaults.
 */
import { describe, expect, it } from 'vitest';
import { resolveDataDir } from '../../src/cli/args.ts';

describe('resolveDataDir()', () => {
  const cwd = '/work/clone';
  it.each([
    ['--data, against the working directory', 'mine', '/etc/hi/x.json5', { HOOK_INTAKE_DATA: '/var/env' }, '/work/clone/mine', '--data'],
    [
      '$HOOK_INTAKE_DATA before the config file',
      undefined,
      '/etc/hi/x.json5',
      { HOOK_INTAKE_DATA: 'env' },
      '/work/clone/env',
      '$HOOK_INTAKE_DATA',
    ],
    ['data next to the config file', undefined, '/etc/hi/x.json5', { HOOK_INTAKE_DATA: '' }, '/etc/hi/data', 'next to the config file'],
    ['./data without a config file', undefined, undefined, {}, '/work/clone/data', 'in the working directory: no config file'],
  ])('takes %s', (_what, flag, file, env, dir, from) => {
    expect(resolveDataDir(flag, file, env, cwd)).toEqual({ dir, from });
  });
});
