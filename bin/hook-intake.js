#!/usr/bin/env node
// The CLI needs Node 24 (node:sqlite, the compile cache); an older `node` would stop at the first
// import with an error that never says so. So this file only checks the version, in syntax any Node
// with ES modules parses, and then loads the CLI.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

var NEEDED = 24;
// the CLI runs the JavaScript that `npm install` (its `prepare` script) or `npm run build` compiled
// from the TypeScript sources into dist/ (docs/development.md, "Building")
var START = new URL('../dist/src/cli/start.js', import.meta.url);
var major = Number(process.versions.node.split('.')[0]);
if (major < NEEDED) {
  process.stderr.write(
    'hook-intake needs Node.js ' +
      NEEDED +
      ' or newer; this is ' +
      process.version +
      ' (' +
      process.execPath +
      '). ' +
      'In a clone, `npm install` then `npm start` (or `npx hook-intake <command>`) runs on the Node ' +
      NEEDED +
      ' that npm installs; ' +
      'otherwise install Node.js ' +
      NEEDED +
      ' (https://nodejs.org/en/download).\n',
  );
  process.exitCode = 1;
} else {
  if (!existsSync(START)) {
    process.stderr.write(
      'hook-intake is not built: ' +
        fileURLToPath(START) +
        ' is missing. Run `npm install` (or `npm run build`) in ' +
        fileURLToPath(new URL('..', import.meta.url)) +
        '.\n',
    );
    process.exitCode = 1;
  } else {
    import(START.href).catch((err) => {
      console.error(err instanceof Error ? err.stack : err);
      process.exitCode = 1;
    });
  }
}
