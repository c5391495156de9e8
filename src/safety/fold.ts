/**
 * The "skeleton" of a text for marker detection: each code point folded on
 * its own to what it looks like in plain upper-case ASCII, with a map back to
 * the original offsets so a match in the skeleton can be cut out of the
 * original text.
 *
 * Folding, per code point:
 * - NFKD (compatibility decomposition): full-width forms, mathematical
 *   letters, circled letters, ligatures, superscripts, roman numerals and
 *   precomposed accented letters become their plain parts;
 * - combining marks (\p{M}: accents, variation selectors, the combining
 *   grapheme joiner) and format characters (\p{Cf}: zero-width space, ZWNJ,
 *   ZWJ, word joiner, soft hyphen, BOM, bidi controls, tag characters) are
 *   dropped, as are the Hangul fillers that render as nothing;
 * - upper-casing, then the look-alike table below for letters NFKD leaves
 *   alone (Cyrillic, Greek, Armenian, Cherokee, Lisu, Coptic, small capitals)
 *   and for angle-bracket look-alikes.
 *
 * Printable ASCII folds to itself upper-cased and control characters are kept,
 * so the skeleton of an ASCII string is just its upper-case form. The safety
 * module relies on that to scan ASCII text without building a skeleton.
 *
 * Folding per code point (not per string) is what makes the result
 * composable: the skeleton of a concatenation is the concatenation of the
 * skeletons. The price is that contextual normalisation (a letter followed by a
 * separate combining mark) is handled by dropping the mark, which is exactly
 * what matching needs.
 */

// Letters that do not decompose to ASCII but look like it. Keys are the
// upper-case form where one exists (folding upper-cases first) and the
// caseless form otherwise. Only shapes that pass for a Latin capital in common
// fonts are listed; a missing entry means "not a marker letter", never "unsafe".
const LOOKALIKES: Readonly<Record<string, string>> = {
  // Cyrillic
  А: 'A',
  В: 'B',
  Е: 'E',
  Ѐ: 'E',
  Ё: 'E',
  Ҽ: 'E',
  К: 'K',
  М: 'M',
  Н: 'H',
  О: 'O',
  Р: 'P',
  С: 'C',
  Т: 'T',
  У: 'Y',
  Ү: 'Y',
  Х: 'X',
  І: 'I',
  Ї: 'I',
  Ӏ: 'I',
  Ј: 'J',
  Ѕ: 'S',
  Ԁ: 'D',
  Ԛ: 'Q',
  Ԝ: 'W',
  Ꙇ: 'I',
  // Greek (ϲ/Ϲ is the lunate sigma, shaped like C)
  Α: 'A',
  Β: 'B',
  Ε: 'E',
  Ζ: 'Z',
  Η: 'H',
  Ι: 'I',
  Κ: 'K',
  Μ: 'M',
  Ν: 'N',
  Ο: 'O',
  Ρ: 'P',
  Τ: 'T',
  Υ: 'Y',
  Χ: 'X',
  Ϲ: 'C',
  ϲ: 'C',
  Ϳ: 'J',
  // Armenian
  Օ: 'O',
  Ս: 'U',
  Տ: 'S',
  // Cherokee (lower-case Cherokee upper-cases into these)
  Ꭰ: 'D',
  Ꭱ: 'R',
  Ꭲ: 'T',
  Ꭹ: 'Y',
  Ꭺ: 'A',
  Ꭻ: 'J',
  Ꭼ: 'E',
  Ꮃ: 'W',
  Ꮇ: 'M',
  Ꮋ: 'H',
  Ꮐ: 'G',
  Ꮓ: 'Z',
  Ꮢ: 'R',
  Ꮩ: 'V',
  Ꮪ: 'S',
  Ꮮ: 'L',
  Ꮯ: 'C',
  Ꮲ: 'P',
  Ꮶ: 'K',
  Ᏼ: 'B',
  // Lisu
  ꓐ: 'B',
  ꓑ: 'P',
  ꓓ: 'D',
  ꓔ: 'T',
  ꓖ: 'G',
  ꓗ: 'K',
  ꓙ: 'J',
  ꓚ: 'C',
  ꓜ: 'Z',
  ꓝ: 'F',
  ꓟ: 'M',
  ꓠ: 'N',
  ꓡ: 'L',
  ꓢ: 'S',
  ꓣ: 'R',
  ꓦ: 'V',
  ꓧ: 'H',
  ꓪ: 'W',
  ꓫ: 'X',
  ꓬ: 'Y',
  ꓮ: 'A',
  ꓰ: 'E',
  ꓲ: 'I',
  ꓳ: 'O',
  ꓴ: 'U',
  // Coptic
  Ⲁ: 'A',
  Ⲃ: 'B',
  Ⲉ: 'E',
  Ⲓ: 'I',
  Ⲕ: 'K',
  Ⲙ: 'M',
  Ⲛ: 'N',
  Ⲟ: 'O',
  Ⲣ: 'P',
  Ⲥ: 'C',
  Ⲧ: 'T',
  Ⲩ: 'Y',
  Ⲭ: 'X',
  // Latin small capitals and other letters with no ASCII decomposition
  ᴀ: 'A',
  ʙ: 'B',
  ᴄ: 'C',
  ᴅ: 'D',
  ᴇ: 'E',
  ɢ: 'G',
  ʜ: 'H',
  ɪ: 'I',
  Ɪ: 'I',
  ᴊ: 'J',
  ᴋ: 'K',
  ʟ: 'L',
  ᴍ: 'M',
  ɴ: 'N',
  ᴏ: 'O',
  ᴘ: 'P',
  ʀ: 'R',
  Ʀ: 'R',
  ꜱ: 'S',
  ᴛ: 'T',
  ᴜ: 'U',
  ᴠ: 'V',
  ᴡ: 'W',
  ʏ: 'Y',
  ᴢ: 'Z',
  Ɑ: 'A',
  ǀ: 'I',
  ℮: 'E',
  '×': 'X',
  // angle brackets and their doubled forms
  '‹': '<',
  '›': '>',
  '«': '<<',
  '»': '>>',
  '〈': '<',
  '〉': '>',
  '《': '<<',
  '》': '>>',
  '⟨': '<',
  '⟩': '>',
  '⟪': '<<',
  '⟫': '>>',
  '❬': '<',
  '❭': '>',
  '❮': '<',
  '❯': '>',
  '˂': '<',
  '˃': '>',
  '≪': '<<',
  '≫': '>>',
  '⋘': '<<<',
  '⋙': '>>>',
};

// Code points that render as nothing; removed from the skeleton so they cannot split a word.
const INVISIBLE = /[\p{Cf}\u115F\u1160\u3164\uFFA0]/u;
const MARK = /\p{M}/u;

const cache = new Map<string, string>();
const CACHE_MAX = 4096;

function foldNonAscii(cp: string): string {
  // before NFKD too: some look-alikes decompose to a letter that no longer looks Latin (Ϲ → Σ)
  const whole = LOOKALIKES[cp];
  if (whole !== undefined) return whole;
  let out = '';
  for (const d of cp.normalize('NFKD')) {
    const direct = LOOKALIKES[d];
    if (direct !== undefined) {
      out += direct;
      continue;
    }
    for (const u of d.toUpperCase().normalize('NFKD')) {
      if (!MARK.test(u) && !INVISIBLE.test(u)) out += LOOKALIKES[u] ?? u;
    }
  }
  return out;
}

/** One code point folded to its skeleton (possibly empty, possibly several characters). */
export function foldCodePoint(cp: string): string {
  const code = cp.charCodeAt(0);
  if (code < 0x80) return code >= 0x61 && code <= 0x7a ? String.fromCharCode(code - 0x20) : cp;
  let folded = cache.get(cp);
  if (folded === undefined) {
    folded = foldNonAscii(cp);
    // a fixed-size cache: long non-Latin texts reuse a small alphabet
    if (cache.size < CACHE_MAX) cache.set(cp, folded);
  }
  return folded;
}

export interface Skeleton {
  text: string;
  /** `origin[i]`: offset in the source of the code point that produced `text[i]`. */
  origin: number[];
}

export function skeletonOf(source: string): Skeleton {
  let text = '';
  const origin: number[] = [];
  let i = 0;
  for (const cp of source) {
    const f = foldCodePoint(cp);
    for (let k = 0; k < f.length; k++) origin.push(i);
    text += f;
    i += cp.length;
  }
  return { text, origin };
}
