// Loaded into a server under test with `node --import` (bench/large-store.ts): a 1 ms timer notes the
// longest gap between its runs beyond its interval, that is the longest the event loop was held.
// On each SIGUSR2 it appends that figure since the previous signal, in milliseconds, to the file
// named by $LOOP_DELAY_FILE, and starts over.
import { appendFileSync } from 'node:fs';

let last = performance.now();
let longest = 0;
setInterval(() => {
  const now = performance.now();
  longest = Math.max(longest, now - last - 1);
  last = now;
}, 1).unref();
process.on('SIGUSR2', () => {
  const now = performance.now();
  appendFileSync(process.env.LOOP_DELAY_FILE, `${Math.max(longest, now - last - 1, 0).toFixed(1)}\n`);
  longest = 0;
});
