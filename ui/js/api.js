// Calls to the service from the console: the session cookie goes with every call (the browser
// sends it; the page never sees it), and every call that changes state carries the session's
// CSRF token, which sign-in answered.

let csrf = null;
const listeners = new Set();

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || `HTTP ${status}`);
    this.status = status;
    this.code = code;
  }
}

/** `fn` is called when a call answers 401: the session has ended. */
export function onSignedOut(fn) {
  listeners.add(fn);
}

function signedOut() {
  csrf = null;
  for (const fn of listeners) fn();
}

export function isSignedIn() {
  return csrf !== null;
}

/** A JSON call; resolves with the parsed answer, rejects with an ApiError. */
export async function api(path, { method = 'GET', body } = {}) {
  const headers = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = csrf ?? '';
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = res.status === 204 ? null : await res.json().catch(() => null);
  if (res.status === 401 && path !== '/ui/session') signedOut();
  if (!res.ok) throw new ApiError(res.status, data?.code, data?.error);
  return data;
}

/** Exchanges the gateway token for a session; the token is sent once, in the Authorization header. */
export async function signIn(token) {
  const res = await fetch('/ui/session', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    credentials: 'same-origin',
  });
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, data?.code, data?.error);
  csrf = data.csrfToken;
  return data;
}

/** Whether the cookie still holds a session (at page load); takes its CSRF token. */
export async function resume() {
  try {
    const data = await api('/ui/session');
    csrf = data.csrfToken;
    return true;
  } catch {
    return false;
  }
}

export async function signOut() {
  try {
    await api('/ui/session', { method: 'DELETE' });
  } finally {
    signedOut();
  }
}
