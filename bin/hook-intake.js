#!/usr/bin/env node
// The CLI needs Node 24 (type stripping, the compile cache); an older `node` would stop at the first
// import with an error that never says so. So this file only checks the version, in syntax any Node
// with ES modules parses, and then loads the CLI.
var NEEDED = 24;
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
  import('../src/cli/start.js').catch((err) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exitCode = 1;
  });
}
