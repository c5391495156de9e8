/**
 * Before the run: the CLI the tests start runs the compiled dist/, so it is built from the sources
 * under test (`npm run build`; docs/development.md, "Building").
 *
 * One temporary directory for the whole test run, removed at its end. The servers the tests
 * start keep Node's compile cache and jiti's cache under the temporary directory, one entry per
 * module path, and most tests write their transforms and plugins in a directory of their own:
 * shared with the machine's temporary directory, those caches grew with every run on a
 * development machine.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  execFileSync(process.execPath, [join(import.meta.dirname, '..', 'scripts', 'build.ts')], { stdio: 'inherit' });
  const dir = mkdtempSync(join(tmpdir(), 'hook-intake-tests-'));
  // read by os.tmpdir() in this process and in every worker and server started from now on
  process.env.TMPDIR = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
