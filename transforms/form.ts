/**
 * A form submission (a JSON webhook from a form service) → one agent run whose
 * message lists the answers.
 *
 * Mapping (the form service posts to /hooks/forms with the hook token in an
 * Authorization header):
 *
 *   { id: 'forms', match: { path: 'forms' }, transform: { module: 'form.ts' } }
 *
 * Two payload shapes are understood:
 * - a list of fields, as Tally sends it:
 *   { data: { formName, fields: [{ label, type, value, options? }] } }
 *   (choice answers arrive as option ids and are shown as their text);
 * - a flat object of fields: { form: "Contact", fields: { name: "Ana", … } }.
 * A filled-in honeypot field (`_gotcha`, as Formspree names it) or a
 * submission without any answer returns null (204).
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';

const HONEYPOT = '_gotcha';
/** Long answers are cut to this many characters. */
const MAX_ANSWER = 4000;

interface ListedField {
  key?: string;
  label?: string;
  value: unknown;
  options?: { id: string; text: string }[];
}
export interface FormSubmission {
  data?: { formName?: string; fields?: ListedField[] };
  form?: string;
  fields?: Record<string, unknown>;
}

export default function form(ctx: TransformContext<FormSubmission>): TransformResult {
  const p = ctx.payload;
  const formName = p.data?.formName ?? p.form;
  const answers: [string, unknown][] = Array.isArray(p.data?.fields)
    ? p.data.fields.map((f) => [f.label || f.key || '?', withOptionText(f)])
    : Object.entries(p.fields ?? {});

  if (answers.some(([label, value]) => label === HONEYPOT && show(value) !== '')) return null;
  const lines = answers
    .filter(([label, value]) => label !== HONEYPOT && show(value) !== '')
    .map(([label, value]) => `${label}: ${show(value)}`);
  if (!lines.length) return null;
  return {
    name: formName ? `Form ${formName}` : 'Form',
    message: [`New response to ${formName ? `"${formName}"` : 'a form'}:`, '', ...lines].join('\n'),
  };
}

/** Choice answers come as option ids; show their text. */
function withOptionText(f: ListedField): unknown {
  if (!f.options || !Array.isArray(f.value)) return f.value;
  return f.value.map((id) => f.options!.find((o) => o.id === id)?.text ?? id);
}

/** One line per answer: lists joined, yes/no for booleans, empty for nothing. */
function show(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(show).filter(Boolean).join(', ');
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  const s = (typeof value === 'object' ? JSON.stringify(value) : String(value)).trim().replace(/\s*\n\s*/g, ' / ');
  return s.length > MAX_ANSWER ? `${s.slice(0, MAX_ANSWER)}…` : s;
}
