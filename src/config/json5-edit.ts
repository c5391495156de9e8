/**
 * Edits a JSON5 (or JSON) file as text, so that every comment, key order and the file's layout
 * stay as the operator wrote them: a small parser finds where each value starts and ends, and an
 * edit replaces one value or inserts one member or list item, indented like its neighbours.
 * (The json5 package parses but cannot write a file back with its comments.)
 */
import JSON5 from 'json5';

interface Span {
  start: number;
  end: number;
}
type Node = (Span & { kind: 'object'; members: Member[] }) | (Span & { kind: 'array'; items: Node[] }) | (Span & { kind: 'scalar' });
interface Member {
  key: string;
  keyStart: number;
  value: Node;
}

class Parser {
  pos = 0;
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }
  skip(): void {
    const t = this.text;
    for (;;) {
      while (this.pos < t.length && /\s/.test(t[this.pos]!)) this.pos++;
      if (t.startsWith('//', this.pos)) {
        const nl = t.indexOf('\n', this.pos);
        this.pos = nl === -1 ? t.length : nl + 1;
      } else if (t.startsWith('/*', this.pos)) {
        const close = t.indexOf('*/', this.pos + 2);
        if (close === -1) throw new Error('unterminated comment');
        this.pos = close + 2;
      } else return;
    }
  }

  value(): Node {
    this.skip();
    const c = this.text[this.pos];
    const start = this.pos;
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"' || c === "'") {
      this.string();
      return { kind: 'scalar', start, end: this.pos };
    }
    while (this.pos < this.text.length && /[A-Za-z0-9_.+\-$]/.test(this.text[this.pos]!)) this.pos++;
    if (this.pos === start) throw new Error(`unexpected ${JSON.stringify(c ?? 'end of file')} at offset ${start}`);
    return { kind: 'scalar', start, end: this.pos };
  }

  string(): string {
    const quote = this.text[this.pos]!;
    const start = this.pos;
    this.pos++;
    while (this.pos < this.text.length && this.text[this.pos] !== quote) this.pos += this.text[this.pos] === '\\' ? 2 : 1;
    this.pos++;
    const literal = this.text.slice(start, this.pos);
    return literal.includes('\\') ? (JSON5.parse(literal) as string) : literal.slice(1, -1);
  }

  object(): Node {
    const start = this.pos++;
    const members: Member[] = [];
    for (;;) {
      this.skip();
      if (this.text[this.pos] === '}') break;
      const keyStart = this.pos;
      let key: string;
      if (this.text[this.pos] === '"' || this.text[this.pos] === "'") key = this.string();
      else {
        while (/[A-Za-z0-9_$]/.test(this.text[this.pos] ?? '')) this.pos++;
        key = this.text.slice(keyStart, this.pos);
        if (!key) throw new Error(`expected a key at offset ${keyStart}`);
      }
      this.skip();
      if (this.text[this.pos++] !== ':') throw new Error(`expected ":" at offset ${this.pos - 1}`);
      members.push({ key, keyStart, value: this.value() });
      this.skip();
      if (this.text[this.pos] === ',') this.pos++;
    }
    this.pos++;
    return { kind: 'object', start, end: this.pos, members };
  }

  array(): Node {
    const start = this.pos++;
    const items: Node[] = [];
    for (;;) {
      this.skip();
      if (this.text[this.pos] === ']') break;
      items.push(this.value());
      this.skip();
      if (this.text[this.pos] === ',') this.pos++;
    }
    this.pos++;
    return { kind: 'array', start, end: this.pos, items };
  }
}

export interface TextStyle {
  /** Keys in double quotes (a `.json` file, or a file that quotes its keys). */
  quoteKeys: boolean;
  /** Strings in single quotes, as the file writes them. */
  singleQuotes?: boolean;
}

function stringText(s: string, style: TextStyle): string {
  const json = JSON.stringify(s);
  return style.singleQuotes ? `'${json.slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'` : json;
}

const keyText = (key: string, style: TextStyle) => (!style.quoteKeys && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? key : JSON.stringify(key));

/** `value` as JSON5 text; objects on several lines at `indent` unless `inline`. */
function serialize(value: unknown, indent: string, style: TextStyle, inline: boolean): string {
  if (Array.isArray(value)) return `[${value.map((v) => serialize(v, indent, style, true)).join(', ')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    if (!entries.length) return '{}';
    if (inline) return `{ ${entries.map(([k, v]) => `${keyText(k, style)}: ${serialize(v, indent, style, true)}`).join(', ')} }`;
    const inner = `${indent}  `;
    return `{\n${entries.map(([k, v]) => `${inner}${keyText(k, style)}: ${serialize(v, inner, style, false)}`).join(',\n')}\n${indent}}`;
  }
  return typeof value === 'string' ? stringText(value, style) : JSON.stringify(value);
}

const lineStart = (text: string, pos: number) => text.lastIndexOf('\n', pos - 1) + 1;
const indentAt = (text: string, pos: number) => /^[ \t]*/.exec(text.slice(lineStart(text, pos)))![0];
const sameLine = (text: string, a: number, b: number) => !text.slice(a, b).includes('\n');

/** After `pos`, skips spaces and a comment that ends the line, to the line's end. */
function endOfLine(text: string, pos: number): number {
  const m = /^[ \t]*(\/\/[^\n]*|\/\*[^\n]*?\*\/[ \t]*)?(?=\n|$)/.exec(text.slice(pos));
  return m ? pos + m[0].length : pos;
}

export class Json5Edit {
  text: string;
  private readonly style: TextStyle;

  constructor(text: string, style: TextStyle) {
    this.text = text;
    this.style = style;
    this.root();
  }

  private root(): Node {
    const p = new Parser(this.text);
    const node = p.value();
    if (node.kind !== 'object') throw new Error('the config must be an object at the top level');
    return node;
  }

  private splice(start: number, end: number, insert: string): void {
    this.text = this.text.slice(0, start) + insert + this.text.slice(end);
  }

  /** The node at `path`, or the deepest object on the way and how far it got. */
  private find(path: string[]): { node: Node; depth: number } {
    let node = this.root();
    for (let i = 0; i < path.length; i++) {
      const m = node.kind === 'object' ? node.members.findLast((x) => x.key === path[i]) : undefined;
      if (!m) return { node, depth: i };
      node = m.value;
    }
    return { node, depth: path.length };
  }

  /** Sets the value at `path`, creating the objects on the way. */
  set(path: string[], value: unknown): void {
    const { node, depth } = this.find(path);
    if (depth === path.length) {
      this.splice(node.start, node.end, serialize(value, indentAt(this.text, node.start), this.style, false));
      return;
    }
    if (node.kind !== 'object') {
      // a scalar in the way (e.g. `gmail: null`): replace it with the nested object
      const nested = path.slice(depth).reduceRight<unknown>((v, k) => ({ [k]: v }), value);
      this.splice(node.start, node.end, serialize(nested, indentAt(this.text, node.start), this.style, false));
      return;
    }
    const nested = path.slice(depth + 1).reduceRight<unknown>((v, k) => ({ [k]: v }), value);
    this.insertMember(node, path[depth]!, nested);
  }

  private insertMember(obj: Node & { kind: 'object' }, key: string, value: unknown): void {
    const t = this.text;
    const last = obj.members.at(-1);
    // `{ a: 1 }` stays on its line; an empty `{}` opens up like a written-out object
    const inline = !!last && sameLine(t, obj.start, obj.end);
    if (inline) {
      this.splice(last.value.end, last.value.end, `, ${keyText(key, this.style)}: ${serialize(value, '', this.style, true)}`);
      return;
    }
    const indent = last ? indentAt(t, last.keyStart) : `${indentAt(t, obj.start)}  `;
    const member = `${keyText(key, this.style)}: ${serialize(value, indent, this.style, false)}`;
    if (!last) {
      const closing = sameLine(t, obj.start, obj.end) ? `\n${indentAt(t, obj.start)}` : '';
      this.splice(obj.start + 1, obj.start + 1, `\n${indent}${member}${closing}`);
      return;
    }
    const p = new Parser(t);
    p.pos = last.value.end;
    p.skip();
    if (t[p.pos] === ',' && p.pos < obj.end - 1) {
      // trailing comma style: the new member gets one too
      const at = endOfLine(t, p.pos + 1);
      this.splice(at, at, `\n${indent}${member},`);
    } else {
      const at = endOfLine(t, last.value.end);
      this.splice(at, at, `\n${indent}${member}`);
      this.splice(last.value.end, last.value.end, ',');
    }
  }

  /** Adds `item` to the list at `path` unless it is there (a scalar; an object is always added); creates the list when absent. */
  addToList(path: string[], item: unknown, current: unknown): void {
    if (Array.isArray(current) && current.includes(item)) return;
    const { node, depth } = this.find(path);
    if (depth < path.length || node.kind !== 'array') {
      this.set(path, [...(Array.isArray(current) ? current : []), item]);
      return;
    }
    const last = node.items.at(-1);
    const text = serialize(item, '', this.style, true);
    if (last) this.splice(last.end, last.end, `, ${text}`);
    else this.splice(node.start + 1, node.start + 1, text);
  }
}
