/**
 * What of a transform's failure reaches an issue or the log (src/transforms/error-text.ts): a module
 * that does not load is shown on one line with the line of its file where it failed.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadFailure } from '../../src/transforms/error-text.ts';

const file = '/srv/transforms/shape.ts';
const error = (message: string, stack: string) => Object.assign(new Error(message), { stack });

describe('loadFailure()', () => {
  it('takes the line from a stack frame in the file, as a file URL or a path', () => {
    const url = error(
      'load-time failure',
      'Error: load-time failure\n    at file:///srv/transforms/shape.ts:2:7\n    at ModuleJob.run (node:internal/x:1:1)',
    );
    expect(loadFailure(url, file)).toEqual({ message: 'load-time failure', line: 2 });
    const path = error(
      'load-time failure',
      'Error: load-time failure\n    at /srv/transforms/shape.ts:4:1\n    at eval (/app/node_modules/jiti/dist/jiti.cjs:1:1)',
    );
    expect(loadFailure(path, file)).toEqual({ message: 'load-time failure', line: 4 });
  });

  it("moves a parser's location out of the message, which stays on one line", () => {
    const parse = error('ParseError: Unexpected token, expected ","  \n /srv/transforms/shape.ts:3:0', 'Error: ParseError');
    expect(loadFailure(parse, file)).toEqual({ message: 'ParseError: Unexpected token, expected ","', line: 3 });
  });

  it('names the module it failed in when that is another one (an import), not the service itself', () => {
    const own = join(import.meta.dirname, '../../src/transforms/worker.ts');
    const stack = `Error: helper broke\n    at /srv/transforms/helper.ts:2:7\n    at /srv/transforms/shape.ts:1:1\n    at load (${own}:40:5)`;
    expect(loadFailure(error('helper broke', stack), file)).toEqual({ message: 'helper broke (at /srv/transforms/helper.ts:2)', line: 1 });
    expect(loadFailure(error('no frame', `Error: no frame\n    at load (${own}:40:5)`), file)).toEqual({ message: 'no frame' });
  });

  it('shows no JSON input a message quotes', () => {
    const json = error('Unexpected token \'s\', "secret-payload" is not valid JSON', 'SyntaxError');
    expect(loadFailure(json, file).message).toBe("Unexpected token 's', the input is not valid JSON (not shown)");
  });
});
