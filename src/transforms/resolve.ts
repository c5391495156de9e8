/**
 * Confinement of transform modules to their directory. A module reference is
 * relative to `transformsDir`; `..` segments, absolute paths, and symlinks that
 * lead outside the directory (compared by realpath) are refused at load.
 */
import { realpathSync, statSync } from 'node:fs';
import { extname, isAbsolute, join, sep } from 'node:path';

export const TRANSFORM_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs', '.cjs'] as const;

export type Resolved = { file: string } | { error: string };

export function resolveTransformModule(dir: string, module: string): Resolved {
  if (isAbsolute(module) || /^[A-Za-z]:[\\/]/.test(module))
    return { error: `"${module}" must be a path relative to the transforms directory` };
  const parts = module.split(/[\\/]+/);
  if (parts.includes('..')) return { error: `"${module}" must not contain ".." (it must stay inside the transforms directory)` };
  let root: string;
  try {
    root = realpathSync(dir);
  } catch {
    return { error: `the transforms directory ${dir} does not exist` };
  }
  const ext = extname(module);
  if (ext && !(TRANSFORM_EXTENSIONS as readonly string[]).includes(ext))
    return { error: `"${module}": transforms must be ${TRANSFORM_EXTENSIONS.join(', ')} files` };
  const candidates = ext ? [module] : TRANSFORM_EXTENSIONS.map((e) => module + e);
  for (const c of candidates) {
    const p = join(dir, c);
    let real: string;
    try {
      real = realpathSync(p);
    } catch {
      continue;
    }
    if (!real.startsWith(root + sep)) return { error: `"${module}" resolves to ${real}, outside the transforms directory ${root}` };
    if (!statSync(real).isFile()) return { error: `"${module}" is not a file` };
    return { file: real };
  }
  return { error: `"${module}" not found in ${dir}${ext ? '' : ` (tried ${TRANSFORM_EXTENSIONS.join(', ')})`}` };
}
