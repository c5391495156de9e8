/** What of a transform's error reaches the log. */
import { realpathSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

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

/** `path:line` or `path:line:column`, the path absolute or a `file://` URL. */
const LOCATION = /((?:file:\/\/)?\/[^\s():]+):(\d+)(?::\d+)?/g;

/**
 * A module that failed to load as an issue shows it: the message on one line (a parser's message
 * comes with its location on a line of its own, which goes), and the line in `file` where it failed,
 * from that location or the error's stack. When the failure is in a module `file` imports, its
 * `path:line` stays in the message.
 */
export function loadFailure(err: unknown, file: string): { message: string; line?: number } {
  const e = err as { message?: unknown; stack?: unknown } | null | undefined;
  const raw = String(e?.message ?? err);
  const kept = raw.split('\n').filter((l) => !new RegExp(`^\\s*${LOCATION.source}\\s*$`).test(l));
  let message = withoutJsonInput(kept.join(' ').replace(/\s+/g, ' ').trim()) || 'failed while loading';
  const mentions = [...`${raw}\n${typeof e?.stack === 'string' ? e.stack : ''}`.matchAll(LOCATION)].map((m) => ({
    path: m[1]!.startsWith('file://') ? fileURLToPath(m[1]!) : m[1]!,
    line: Number(m[2]),
  }));
  const names = new Set([file, realPath(file)]);
  const here = mentions.find((m) => names.has(m.path));
  const first = mentions.find((m) => !m.path.includes(`${sep}node_modules${sep}`) && !m.path.startsWith(SOURCES));
  if (first && !names.has(first.path)) message += ` (at ${first.path}:${first.line})`;
  return here ? { message, line: here.line } : { message };
}

function realPath(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

/** This service's own source files: frames in them (the worker, the loader) say nothing about the transform. */
const SOURCES = resolve(import.meta.dirname, '..');
