/** Decoding secrets written in base64, as signing schemes write keys (Standard Webhooks' `whsec_…`). */

/** Standard base64 or base64url, strictly: only the alphabet and trailing padding. Undefined for anything else. */
export function decodeBase64Strict(s: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(s) && !/^[A-Za-z0-9_-]+={0,2}$/.test(s)) return undefined;
  const bytes = Buffer.from(s, s.includes('-') || s.includes('_') ? 'base64url' : 'base64');
  // reject encodings Node silently truncates (a stray character count)
  const canonical = bytes.toString(s.includes('-') || s.includes('_') ? 'base64url' : 'base64').replace(/=+$/, '');
  return canonical === s.replace(/=+$/, '') && bytes.length > 0 ? bytes : undefined;
}
