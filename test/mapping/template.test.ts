/**
 * Templates (docs/mappings.md, "Templates"): the `{{expr}}` grammar, parsed once at load, with
 * missing values rendering "" and objects rendering as JSON.
 */
import { describe, expect, it } from 'vitest';
import { compileExpr, compileTemplate, stringify, TemplateError, type TemplateScope } from '../../src/mapping/template.ts';

const scope: TemplateScope = {
  name: 'github',
  now: '2026-11-20T09:12:00.000Z',
  headers: { 'x-github-event': 'issues', 'x-multi': ['a', 'b'], accept: 'application/json' },
  query: { from: 'cron', empty: '' },
  payload: {
    action: 'opened',
    issue: { number: 7, title: 'Crash on start', labels: [{ name: 'bug' }, { name: 'p1' }] },
    repository: { full_name: 'acme/app' },
    count: 0,
    flag: true,
    nothing: null,
    subject: 'payload subject',
    messages: [{ id: 'm1', subject: 'first' }],
  },
};
const inItem: TemplateScope = { ...scope, item: { subject: 'item subject', id: 'i1' }, index: 3 };

const render = (source: string, s: TemplateScope = scope) => compileTemplate(source)(s);

describe('compileTemplate()', () => {
  it.each([
    ['plain text, no expression', 'no braces here', 'no braces here'],
    ['the empty template', '', ''],
    ['path: the hook name', 'hook {{path}}', 'hook github'],
    ['now: the request time', 'at {{now}}', 'at 2026-11-20T09:12:00.000Z'],
    ['headers.<name>', '{{headers.x-github-event}}', 'issues'],
    ['headers.<name> in any case', '{{headers.X-GitHub-Event}}', 'issues'],
    ['a repeated header, joined', '{{headers.x-multi}}', 'a, b'],
    ['a missing header', '[{{headers.x-missing}}]', '[]'],
    ['query.<name>', 'from {{query.from}}', 'from cron'],
    ['a missing query parameter', '[{{query.nope}}]', '[]'],
    ['payload.<path>', '{{payload.issue.title}}', 'Crash on start'],
    ['payload[<index>]: a payload that is an array', '[{{payload[0].id}}]', '[]'],
    ['a bare payload path', '#{{issue.number}} {{issue.labels[1].name}}', '#7 p1'],
    ['bracket paths', '{{messages[0]["subject"]}}', 'first'],
    ['spaces inside the braces', '{{  issue.number  }}', '7'],
    ['a number zero', 'n={{count}}', 'n=0'],
    ['a boolean', '{{flag}}', 'true'],
    ['null as empty', '[{{nothing}}]', '[]'],
    ['a missing value as empty', '[{{issue.assignee.login}}]', '[]'],
    ['an object as JSON', '{{repository}}', '{"full_name":"acme/app"}'],
    ['an array as JSON', '{{issue.labels}}', '[{"name":"bug"},{"name":"p1"}]'],
    ['several expressions and text', '{{repository.full_name}}#{{issue.number}}: {{issue.title}}', 'acme/app#7: Crash on start'],
    ['an escaped \\{{', 'literal \\{{path}} and {{path}}', 'literal {{path}} and github'],
    ['a lone }}', 'a }} b', 'a }} b'],
    ['a single brace', '{path}', '{path}'],
    ['three closing braces', '{{count}}}', '0}'],
    ['item outside forEach', '[{{item}}][{{index}}][{{item.id}}]', '[][][]'],
  ])('renders %s', (_what, source, out) => {
    expect(render(source)).toBe(out);
  });

  it('renders the whole payload as JSON', () => {
    expect(JSON.parse(render('{{payload}}'))).toEqual(scope.payload);
  });

  describe('in a forEach item', () => {
    it.each([
      ['item.<path>', '{{item.subject}}', 'item subject'],
      ['item as JSON', '{{item}}', '{"subject":"item subject","id":"i1"}'],
      ['index', '#{{index}}', '#3'],
      ['a bare path: the item first', '{{subject}}', 'item subject'],
      ['a bare path missing in the item: the payload', '{{issue.title}}', 'Crash on start'],
      ['payload.<path>: never the item', '{{payload.subject}}', 'payload subject'],
    ])('renders %s', (_what, source, out) => {
      expect(render(source, inItem)).toBe(out);
    });

    it('falls back to the payload for a primitive item', () => {
      expect(render('{{subject}} / {{item}} / {{index}}', { ...scope, item: 'plain', index: 0 })).toBe('payload subject / plain / 0');
    });

    it('renders index 0 (not empty)', () => {
      expect(render('{{index}}', { ...inItem, index: 0 })).toBe('0');
    });

    describe('index 0 of the forEach array', () => {
      const second: TemplateScope = {
        ...scope,
        payload: { ...(scope.payload as object), messages: [{ id: 'm1' }, { id: 'm2', subject: 'second' }] },
        item: { id: 'm2', subject: 'second' },
        index: 1,
      };
      const each = (source: string, s: TemplateScope = second) => compileTemplate(source, { forEach: 'messages' })(s);

      it.each([
        ['a bare path', '{{messages[0].id}}', 'm2'],
        ['a payload path', '{{payload.messages[0].subject}}', 'second'],
        ['a quoted index', '{{messages["0"].id}}', 'm2'],
        ['the element itself', '{{messages[0]}}', '{"id":"m2","subject":"second"}'],
        ['another index: the payload', '{{messages[1].id}} {{messages[0].id}}', 'm2 m2'],
        ['the whole array: the payload', '{{messages}}', '[{"id":"m1"},{"id":"m2","subject":"second"}]'],
      ])('is the current item: %s', (_what, source, out) => {
        expect(each(source)).toBe(out);
      });

      it('only for the forEach field, and only in a forEach mapping', () => {
        expect(each('{{issue.labels[0].name}}')).toBe('bug');
        expect(compileTemplate('{{messages[0].id}}')(second)).toBe('m1');
      });
    });
  });

  it.each([
    ['an unclosed {{', 'hello {{path', 'unclosed "{{" at 7'],
    ['an unclosed {{ after a valid one', '{{path}} {{now', 'unclosed "{{" at 10'],
    ['empty braces', 'a {{}} b', 'empty "{{}}" at 3'],
    ['blank braces', '{{   }}', 'empty "{{}}" at 1'],
    ['headers without a name', '{{headers}}', '"headers" needs a header name'],
    ['headers. without a name', '{{headers.}}', '"headers" needs a header name'],
    ['a header name with spaces', '{{headers.x y}}', '"x y" is not a header name'],
    ['query without a name', '{{query}}', '"query" needs a parameter name'],
    ['payload. without a path', '{{payload.}}', 'empty path'],
    ['a bad path', '{{issue..title}}', 'unexpected "."'],
    ['an expression that is not a path', '{{a + b}}', 'unexpected " "'],
  ])('refuses %s', (_what, source, reason) => {
    expect(() => compileTemplate(source)).toThrow(TemplateError);
    expect(() => compileTemplate(source)).toThrow(reason);
  });

  it('names the expression in its error', () => {
    expect(() => compileTemplate('x {{issue..title}} y')).toThrow(/^\{\{issue\.\.title\}\}: /);
  });

  it.each([
    '{{__proto__}}',
    '{{__proto__.polluted}}',
    '{{constructor}}',
    '{{payload.constructor.prototype}}',
    '{{payload["__proto__"]}}',
    "{{issue['constructor']}}",
    '{{item.__proto__}}',
    '{{items[0].prototype}}',
    '{{query.__proto__}}',
    '{{query.constructor}}',
    '{{query.prototype}}',
    '{{headers.__proto__}}',
    '{{headers.constructor}}',
    '{{headers.Prototype}}',
  ])('refuses the prototype segment in %s at load', (source) => {
    expect(() => compileTemplate(source)).toThrow(/is not allowed in a path/);
  });

  it('never reads an inherited property of the payload, headers or query', () => {
    const proto = { inherited: 'leak' };
    const s: TemplateScope = {
      ...scope,
      payload: Object.create(proto),
      headers: Object.create(proto),
      query: Object.create(proto),
      item: Object.create(proto),
    };
    expect(render('[{{inherited}}][{{payload.inherited}}][{{headers.inherited}}][{{query.inherited}}][{{item.inherited}}]', s)).toBe(
      '[][][][][]',
    );
    // plain objects inherit Object.prototype's members
    expect(render('[{{toString}}][{{headers.hasOwnProperty}}][{{query.valueOf}}]')).toBe('[][][]');
  });

  it('is parsed once: the source and whether it is static are known', () => {
    const t = compileTemplate('Issue {{issue.number}}');
    expect(t.source).toBe('Issue {{issue.number}}');
    expect(t.isStatic).toBe(false);
    expect(compileTemplate('openai/gpt-5').isStatic).toBe(true);
    expect(compileTemplate('literal \\{{x}}').isStatic).toBe(true);
    expect(compileTemplate('').isStatic).toBe(true);
  });
});

describe('compileExpr()', () => {
  it('reads into a payload that is an array with payload[<index>]', () => {
    const batch: TemplateScope = { ...scope, payload: [{ sg_event_id: 'e1' }, { sg_event_id: 'e2' }] };
    expect(compileExpr('payload[1].sg_event_id')(batch)).toBe('e2');
    expect(compileExpr('payload[0]')(batch)).toEqual({ sg_event_id: 'e1' });
    expect(() => compileExpr('payload[x]')).toThrow(/expected an index/);
  });

  it('returns the raw value, not a string', () => {
    expect(compileExpr('issue.number')(scope)).toBe(7);
    expect(compileExpr('issue.labels')(scope)).toEqual([{ name: 'bug' }, { name: 'p1' }]);
    expect(compileExpr('missing')(scope)).toBeUndefined();
  });
});

describe('stringify()', () => {
  it.each([
    [undefined, ''],
    [null, ''],
    ['text', 'text'],
    [0, '0'],
    [-1.5, '-1.5'],
    [false, 'false'],
    [{ a: [1, 'x'] }, '{"a":[1,"x"]}'],
    [[], '[]'],
  ])('%j → %j', (value, out) => {
    expect(stringify(value)).toBe(out);
  });
});
