/**
 * The files an installation has are the files the service reads at start. The image built from
 * deploy/Dockerfile once lacked `ui/` and died at start; package.json "files" says what an
 * installed package holds. Each is laid out in a directory of its own, exactly as it says (the
 * Dockerfile's COPY lines of its last stage, a build stage's files taken from this checkout, as
 * that stage builds them from the same sources; the "files" list), with this checkout's
 * node_modules, and the service is started from there: it must start, answer and take a wake.
 */
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanup, post, ROOT, startCli, tempDir } from '../helpers/cli.ts';
import { dockerfileStages } from '../helpers/deploy.ts';
import pkg from '../../package.json' with { type: 'json' };

/** Lays out the last stage of deploy/Dockerfile under `root` (its / there); returns its WORKDIR there. */
function layOutImage(root: string): { app: string; config: string } {
  const stages = dockerfileStages();
  const image = stages.at(-1)!;
  for (const c of image.copies) {
    // a build stage's WORKDIR holds this checkout's layout: the same sources, built the same way
    const stage = c.from === undefined ? undefined : stages.find((s) => s.name === c.from);
    if (c.from !== undefined && !stage) throw new Error(`COPY --from=${c.from}: no such stage`);
    const dest = join(root, isAbsolute(c.dest) ? c.dest : posix.join(c.workdir, c.dest));
    for (const s of c.sources) {
      const from = stage ? join(ROOT, posix.relative(stage.workdir, s)) : join(ROOT, s);
      const single = c.sources.length === 1 && !c.dest.endsWith('/');
      cpSync(from, single ? dest : join(dest, posix.basename(s)), { recursive: true });
    }
  }
  // what `RUN npm ci --omit=dev` installs
  const app = join(root, image.workdir);
  symlinkSync(join(ROOT, 'node_modules'), join(app, 'node_modules'));
  return { app, config: join(root, image.env.HOOK_INTAKE_CONFIG!) };
}

/** Lays out what package.json "files" names (and package.json, which npm always includes) under `root`. */
function layOutPackage(root: string): string {
  mkdirSync(root, { recursive: true });
  for (const f of [...pkg.files, 'package.json']) cpSync(join(ROOT, f), join(root, f), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  return root;
}

/** Starts serve from the installation at `app` on `config`; it answers /healthz, the console's page and a wake. */
async function servesFrom(app: string, dir: string, config: string): Promise<void> {
  const srv = await startCli({ dir, bin: join(app, 'bin/hook-intake.js'), args: ['--config', config], cwd: app });
  try {
    expect((await fetch(`${srv.url}/healthz`)).status).toBe(200);
    const ui = await fetch(`${srv.url}/ui/`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toContain('<html');
    // the generated token, read where the first start says it is kept
    const tokenFile = /\$\(cat (\S+hook-token)\)/.exec(srv.output())![1]!;
    const token = readFileSync(tokenFile, 'utf8').trim();
    const wake = await post(`${srv.url}/hooks/wake`, { text: 'hello' }, { authorization: `Bearer ${token}` });
    expect(wake.status).toBe(200);
  } finally {
    expect(await srv.stop()).toBe(0);
  }
}

describe('what an installation holds', () => {
  it('the image of deploy/Dockerfile: the service starts from its files and serves', async () => {
    const dir = tempDir();
    try {
      const { app, config } = layOutImage(join(dir, 'image'));
      await servesFrom(app, dir, config);
    } finally {
      cleanup(dir);
    }
  });

  it('package.json "files": the service starts from them and serves', async () => {
    const dir = tempDir();
    try {
      const app = layOutPackage(join(dir, 'package'));
      const config = join(dir, 'hook-intake.json5');
      writeFileSync(config, `{ hooks: { enabled: true } }\n`);
      await servesFrom(app, dir, config);
    } finally {
      cleanup(dir);
    }
  });
});
