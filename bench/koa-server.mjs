/**
 * A reference point, not a baseline: the bare server's work (read the body,
 * parse it, compare the token, answer 200) done in one Koa middleware. Run
 * with `--koa`, it shows how much of hook-intake's cost per request is the
 * framework itself on this machine.
 *
 * Usage: node bench/koa-server.mjs TOKEN  (prints `listening on http://ADDR:PORT`)
 */
import Koa from 'koa';

const expected = `Bearer ${process.argv[2] ?? ''}`;
const app = new Koa();

app.use(async (ctx) => {
  /** @type {Buffer[]} */
  const chunks = [];
  for await (const c of ctx.req) chunks.push(c);
  if (ctx.get('authorization') !== expected) {
    ctx.status = 401;
    ctx.body = { ok: false };
    return;
  }
  try {
    JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    ctx.status = 400;
    ctx.body = { ok: false };
    return;
  }
  ctx.body = { ok: true };
});

const server = app.listen(0, '127.0.0.1', () => {
  const a = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.stdout.write(`listening on http://${a.address}:${a.port}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
