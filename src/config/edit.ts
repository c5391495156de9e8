/**
 * Changes a few keys of a config file and keeps the rest of it: every other key, the comments and
 * the layout. JSON5/JSON through `Json5Edit` (a textual edit), YAML through the `yaml` package's
 * Document API (which keeps comments). The file is replaced atomically, with its mode.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';
import { extname } from 'node:path';
import JSON5 from 'json5';
import { isScalar, isSeq, parseDocument, type Document } from 'yaml';
import { Json5Edit } from './json5-edit.ts';

export interface ConfigEditor {
  /** The file's data as parsed (no `${ENV}` or `{file}` resolved). */
  get(path: string[]): unknown;
  set(path: string[], value: unknown): void;
  /** Adds `item` to a list unless it holds it already (a scalar; an object is always added). */
  addToList(path: string[], item: unknown): void;
  text(): string;
}

const isYaml = (file: string) => ['.yaml', '.yml'].includes(extname(file).toLowerCase());

function dig(data: unknown, path: string[]): unknown {
  let v = data;
  for (const k of path) v = v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

export function editConfigText(file: string, text: string): ConfigEditor {
  if (isYaml(file)) return yamlEditor(text);
  const source = text.trim() ? text : '{}\n';
  const json = extname(file).toLowerCase() === '.json';
  // the file's own habits: quoted keys (`"hooks": …`), single-quoted strings (`: 'x'`)
  const edit = new Json5Edit(source, { quoteKeys: json || /^\s*"[^"\n]*"\s*:/m.test(source), singleQuotes: !json && /:\s*'/.test(source) });
  return {
    get: (path) => dig(JSON5.parse(edit.text), path),
    set: (path, value) => edit.set(path, value),
    addToList: (path, item) => edit.addToList(path, item, dig(JSON5.parse(edit.text), path)),
    text: () => edit.text,
  };
}

function yamlEditor(text: string): ConfigEditor {
  const doc: Document = parseDocument(text);
  if (doc.errors.length) throw new Error(`YAML: ${doc.errors[0]!.message.split('\n')[0]}`);
  if (doc.contents === null) doc.contents = doc.createNode({}) as never;
  return {
    get: (path) => dig(doc.toJS(), path),
    set: (path, value) => {
      // an empty key on the way (`hooks:` with nothing under it) becomes a map
      for (let i = 1; i < path.length; i++) {
        const node = doc.getIn(path.slice(0, i), true);
        if (isScalar(node) && node.value === null) {
          const map = doc.createNode({});
          // `hooks: # note` keeps its note, on the line below
          map.commentBefore = node.comment;
          doc.setIn(path.slice(0, i), map);
        }
      }
      doc.setIn(path, value);
    },
    addToList: (path, item) => {
      const list = doc.getIn(path, true);
      if (isSeq(list)) {
        if (!list.items.some((x) => (x as { value?: unknown }).value === item || x === item)) list.add(doc.createNode(item));
      } else doc.setIn(path, [item]);
    },
    text: () => doc.toString(),
  };
}

/** Reads, edits and atomically rewrites `file` (keeping its mode). */
export function editConfigFile(file: string, change: (edit: ConfigEditor) => void): void {
  const edit = editConfigText(file, readFileSync(file, 'utf8'));
  change(edit);
  const mode = statSync(file).mode & 0o777;
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', mode);
  try {
    writeSync(fd, edit.text());
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}
