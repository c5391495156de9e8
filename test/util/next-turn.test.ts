/** onNextTurn: calls during one turn run the function once, on the next turn. */
import { describe, expect, it } from 'vitest';
import { onNextTurn } from '../../src/util/next-turn.ts';

const turn = () => new Promise((r) => setImmediate(r));

describe('onNextTurn()', () => {
  it('runs once per turn however often it is asked, and not before the turn ends', async () => {
    let runs = 0;
    const schedule = onNextTurn(() => runs++);
    schedule();
    schedule();
    schedule();
    expect(runs).toBe(0);
    await turn();
    expect(runs).toBe(1);
    schedule();
    await turn();
    expect(runs).toBe(2);
  });
});
