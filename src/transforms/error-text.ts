/** What of a transform's error reaches the log. */

/**
 * V8 quotes the input in some JSON.parse errors (`Unexpected token 's',
 * "secret…" is not valid JSON`). A transform that parses a payload field
 * would put payload content into the log that way, so the quote is dropped:
 * the log gets the reason, never the input.
 */
export function withoutJsonInput(message: string): string {
  const m = /(^|, )(?:\.\.\.)?"[\s\S]*"(?:\.\.\.)? is not valid JSON$/.exec(message);
  return m ? `${message.slice(0, m.index)}${m[1]}the input is not valid JSON (not shown)` : message;
}
