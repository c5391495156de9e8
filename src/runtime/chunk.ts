/**
 * Splits a reply into pieces no longer than a channel's text limit, preferring
 * paragraph, then line, then word boundaries, never splitting a surrogate pair.
 */
export function chunkText(text: string, max: number | undefined): string[] {
  if (!max || text.length <= max) return [text];
  const out: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const window = rest.slice(0, max);
    let cut = Math.max(window.lastIndexOf('\n\n'), -1);
    if (cut < max / 2) cut = window.lastIndexOf('\n');
    if (cut < max / 2) cut = window.lastIndexOf(' ');
    if (cut < max / 2) {
      cut = max;
      const code = rest.charCodeAt(cut - 1);
      // keep the pair together; with a limit of 1 the pair goes whole (cutting before it would never advance)
      if (code >= 0xd800 && code <= 0xdbff) cut = cut > 1 ? cut - 1 : cut + 1;
    }
    out.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).replace(/^\s+/, '');
  }
  if (rest) out.push(rest);
  return out.filter((c) => c.length > 0);
}
