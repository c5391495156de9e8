/**
 * The `typeform` preset's messages (docs/presets/typeform.md): a form response as its questions and
 * answers in plain lines, with the form, when it was submitted, the score and the hidden fields. One
 * session per response, so a partial response and the finished one share it.
 */
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { lines, oneLine, result, sessionKey, summarize } from '../_shared/message.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);

const MAX_ANSWERS = 40;

export default function typeform(ctx: TransformContext<Obj>): TransformResult {
  const p = obj(ctx.payload);
  const event = ctx.event || str(p.event_type);
  const r = obj(p.form_response);
  if (event !== 'form_response' && event !== 'form_response_partial') {
    const { event_id: _e, event_type: _t, ...rest } = p;
    return result(ctx, lines(`Typeform event "${oneLine(event, 80) || 'unnamed'}"`, summarize(rest)), undefined);
  }
  const form = obj(r.definition);
  const formId = str(r.form_id) || str(form.id);
  const answers = list(r.answers);
  const hidden = Object.entries(obj(r.hidden)).filter(([, v]) => str(v));
  const score = str(obj(r.calculated).score);
  const text = lines(
    `${event === 'form_response_partial' ? 'Partial response' : 'New response'} to "${oneLine(form.title, 120) || formId}" (form ${formId})${when(r.submitted_at)}${score ? `, score ${score}` : ''}`,
    ...answers.slice(0, MAX_ANSWERS).flatMap((a) => [`Q: ${oneLine(question(form, a), 300)}`, `A: ${answer(a)}`]),
    answers.length > MAX_ANSWERS && `(${answers.length - MAX_ANSWERS} more answers)`,
    hidden.length > 0 && `Hidden fields: ${hidden.map(([k, v]) => `${k}=${oneLine(v, 80)}`).join(', ')}`,
    str(obj(r.ending).ref) && `Ending: ${oneLine(obj(r.ending).ref, 80)}`,
    str(r.response_url),
  );
  return result(ctx, text, sessionKey('hook:typeform', formId, str(r.token)));
}

const when = (v: unknown): string =>
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(str(v)) ? `, submitted ${str(v).slice(0, 16).replace('T', ' ')} UTC` : '';

/** The question an answer belongs to, by its field's id in the form's definition, else its ref. */
function question(form: Obj, a: Obj): string {
  const field = obj(a.field);
  const defined = list(form.fields).find((f) => str(f.id) === str(field.id));
  return str(obj(defined).title) || str(field.ref) || str(field.id) || 'Question';
}

/** An answer as plain text, whatever its type. */
function answer(a: Obj): string {
  const type = str(a.type);
  const v = a[type];
  switch (type) {
    case 'boolean':
      return v === true ? 'yes' : v === false ? 'no' : '';
    case 'choice': {
      const c = obj(v);
      return oneLine(str(c.label) || str(c.other), 300);
    }
    case 'choices': {
      const c = obj(v);
      const picked = (Array.isArray(c.labels) ? c.labels : []).map((l) => oneLine(l, 120));
      if (str(c.other)) picked.push(oneLine(c.other, 120));
      return picked.join(', ');
    }
    case 'payment': {
      const pay = obj(v);
      return `${str(pay.success) === 'false' ? 'payment failed' : 'paid'} ${oneLine(pay.amount, 40)}${str(pay.name) ? ` by ${oneLine(pay.name, 80)}` : ''}`;
    }
    case 'multi_format':
      return oneLine(str(obj(v).text) || str(obj(v).file_url) || 'a recording', 500);
    default:
      // text, email, url, file_url, date, number, phone_number: the value under the type's name
      return oneLine(v, 1000) || '(no answer)';
  }
}
