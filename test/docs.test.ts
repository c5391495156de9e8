/**
 * The project's own reference: comments, tests and docs point a reader at files in the repository,
 * never at a document the repository does not hold. Every `docs/<file>.md` (or `SECURITY.md`,
 * `README.md`) a file cites exists, and each quoted section name after it, as in
 * `(docs/http.md, "Order of checks")` or `(docs/http.md, "Kept requests" and "Admin actions")`,
 * is a heading of that file or the bold label that opens one of its paragraphs (`**Backlogs.**`).
 * Inside docs/, a bare `configuration.md, "Retention"` means the file beside it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/cli.ts';

const FOLDERS = ['src', 'test', 'ui', 'plugins', 'transforms', 'bench', 'presets', 'docs', 'bin', 'scripts', 'deploy'];
const TOP_FILES = ['README.md', 'SECURITY.md'];
const TEXT = /\.(ts|mts|js|mjs|cjs|md|json5|ya?ml|html|css|service)$|(^|\/)Dockerfile$/;
const SKIP = /(^|\/)(node_modules|fixtures|data)(\/|$)/;

/** Every text file of the folders above, as paths relative to the repository. */
function sources(): string[] {
  const found = FOLDERS.flatMap((folder) =>
    (readdirSync(join(ROOT, folder), { recursive: true }) as string[]).map((p) => join(folder, p).replaceAll('\\', '/')),
  );
  return [...found.filter((p) => TEXT.test(p) && !SKIP.test(p)), ...TOP_FILES];
}

/** The text with each line break and the comment leader after it (` * `, `// `, `# ` outside Markdown) made one space. */
const flatten = (path: string, text: string) =>
  text.replace(path.endsWith('.md') ? /\n[ \t]*/g : /\n[ \t]*(?:\*(?!\/)|\/\/|#)?[ \t]*/g, ' ');

/** A cited file and the section names quoted after it. */
interface Citation {
  file: string;
  sections: string[];
}

const CITATION = /(?<![\w/.-])`?((?:docs\/)?[\w-]+(?:\/[\w-]+)*\.md)`?((?:(?:,| and|;)? *"[^"]{1,100}")*)/g;

/** The citations in `text` of a file at `path`: docs/… and the top files anywhere, bare names inside docs/. */
function citations(path: string, text: string): Citation[] {
  const out: Citation[] = [];
  for (const m of flatten(path, text).matchAll(CITATION)) {
    const name = m[1]!;
    let file: string;
    if (name.startsWith('docs/') || TOP_FILES.includes(name)) file = name;
    else if (path.startsWith('docs/')) file = normalize(join(dirname(path), name)).replaceAll('\\', '/');
    else continue;
    out.push({ file, sections: [...m[2]!.matchAll(/"([^"]+)"/g)].map((s) => s[1]!) });
  }
  return out;
}

const plain = (name: string) => name.replaceAll('`', '').trim();

/** The names a section of `markdown` may be cited by: its headings and its paragraphs' bold labels. */
function sectionNames(markdown: string): Set<string> {
  const names = new Set<string>();
  for (const m of markdown.matchAll(/^#{1,6}[ \t]+(.+)$/gm)) names.add(plain(m[1]!));
  for (const m of markdown.matchAll(/^[ \t]*(?:[-*][ \t]+)?\*\*([^*\n]+?)\.?\*\*/gm)) names.add(plain(m[1]!));
  return names;
}

describe('citations', () => {
  it('reads a file, the sections after it, and bare names inside docs/', () => {
    const text = '// see (docs/http.md, "Kept requests" and\n  // "Admin actions"; docs/redis.md) and `runtime.md`, "Backlogs"';
    expect(citations('src/x.ts', text)).toEqual([
      { file: 'docs/http.md', sections: ['Kept requests', 'Admin actions'] },
      { file: 'docs/redis.md', sections: [] },
    ]);
    expect(citations('docs/configuration.md', text)[2]).toEqual({ file: 'docs/runtime.md', sections: ['Backlogs'] });
  });

  it('takes headings without their backticks, and bold paragraph labels, as section names', () => {
    const names = sectionNames('# Title\n## `POST {hooks.path}/wake`\n\n**Backlogs.** When…\n- **The main route** (`last`): …\n');
    expect([...names]).toEqual(['Title', 'POST {hooks.path}/wake', 'Backlogs', 'The main route']);
  });
});

describe("the project's own reference", () => {
  const files = sources();

  it('cites no document outside the repository', () => {
    const outside = /SPEC \u00a7|SPEC\.md/;
    const found = files.flatMap((path) =>
      readFileSync(join(ROOT, path), 'utf8')
        .split('\n')
        .flatMap((line, i) => (outside.test(line) ? [`${path}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it('cites files that exist, and sections those files have', () => {
    const names = new Map<string, Set<string> | undefined>();
    const sectionsOf = (file: string) => {
      if (!names.has(file)) {
        const path = join(ROOT, file);
        names.set(file, existsSync(path) ? sectionNames(readFileSync(path, 'utf8')) : undefined);
      }
      return names.get(file);
    };
    const broken: string[] = [];
    let cited = 0;
    for (const path of files) {
      for (const { file, sections } of citations(path, readFileSync(join(ROOT, path), 'utf8'))) {
        const known = sectionsOf(file);
        if (!known) broken.push(`${path}: ${file} does not exist`);
        for (const section of sections) {
          cited++;
          if (known && !known.has(plain(section))) broken.push(`${path}: ${file} has no section "${section}"`);
        }
      }
    }
    expect(broken).toEqual([]);
    // the check found what it checks: the code and tests cite sections by name
    expect(cited).toBeGreaterThan(50);
  });
});
