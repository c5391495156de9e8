/**
 * The form example: answers of a form submission → one agent run.
 */
import { describe, expect, it } from 'vitest';
import form, { type FormSubmission } from './form.ts';
import { context, fixture } from '../test/helpers/transform-context.ts';

const run = (payload: FormSubmission) => form(context(payload, { path: 'forms' }));
const load = (name: string) => fixture<FormSubmission>(`form-${name}.json`);

describe('transforms/form.ts', () => {
  it('lists the answers of a Tally-style submission, showing choices as text and skipping empty ones', () => {
    expect(run(load('tally'))).toEqual({
      name: 'Form Contact us',
      message: [
        'New response to "Contact us":',
        '',
        'Name: Ana Lima',
        'Email: ana@example.org',
        'Topic: Billing',
        'Message: Hello, / our invoice 2041 shows the wrong VAT number. / Could you send a corrected one?',
        'Send me product news: no',
        'utm_source: pricing-page',
      ].join('\n'),
    });
  });

  it('lists the answers of a flat submission', () => {
    expect(run(load('flat'))).toEqual({
      name: 'Form Beta sign-up',
      message: 'New response to "Beta sign-up":\n\nname: Jo Park\nemail: jo@example.net\nplatforms: macOS, Linux',
    });
  });

  it('drops a submission whose honeypot field is filled in', () => {
    const spam = load('flat');
    spam.fields!._gotcha = 'http://spam.example';
    expect(run(spam)).toBeNull();
  });

  it.each([
    ['no fields at all', {}],
    ['only empty answers', { form: 'Empty', fields: { a: '', b: null, c: [] } }],
    ['an empty field list', { data: { formName: 'x', fields: [] } }],
  ])('returns null for %s', (_what, payload) => {
    expect(run(payload as FormSubmission)).toBeNull();
  });

  it('cuts a very long answer', () => {
    const r = run({ form: 'Long', fields: { essay: 'y'.repeat(5000) } }) as { message: string };
    expect(r.message.endsWith(`essay: ${'y'.repeat(4000)}…`)).toBe(true);
  });

  it('copes with a form without a name', () => {
    expect(run({ fields: { q: 'a' } })).toEqual({ name: 'Form', message: 'New response to a form:\n\nq: a' });
  });
});
