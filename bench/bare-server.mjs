/**
 * The baseline: the least a webhook receiver can do over node:http. It reads
 * the body, parses it as JSON, compares the bearer token and answers 200.
 * Every hook-intake figure in the benchmark is a ratio against this server,
 * measured in the same run on the same machine.
 *
 * Usage: node bench/bare-server.mjs TOKEN  (prints `listening on http://ADDR:PORT`)
 */
import { createServer } from 'node:http';

const expected = `Bearer ${process.argv[2] ?? ''}`;
const OK = '{"ok":true}';

const server = createServer((req, res) => {
  /** @type {Buffer[]} */
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let status = 200;
    if (req.headers.authorization !== expected) status = 401;
    else {
      try {
        JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        status = 400;
      }
    }
    const body = status === 200 ? OK : '{"ok":false}';
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});

server.listen(0, '127.0.0.1', () => {
  const a = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.stdout.write(`listening on http://${a.address}:${a.port}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
