/**
 * Random hex strings drawn from a pooled CSPRNG buffer. `crypto.randomBytes`
 * makes one call into OpenSSL per id, on every request (measured:
 * docs/performance.md, "Ids, deadlines and collections"); refilling a 4 KiB
 * pool spreads that call over 512 ids of 8 bytes. Same generator, same strength: node's own `randomUUID()` pools the
 * same way.
 */
import { randomBytes, randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(4096);
let offset = pool.length;

export function randomHex(bytes: number): string {
  if (bytes > pool.length) return randomBytes(bytes).toString('hex');
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}
