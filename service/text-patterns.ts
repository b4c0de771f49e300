/**
 * What a text parameter must hold, as JSON Schema patterns for the OpenAPI document, derived from
 * the functions that decide it ({@link fold} and {@link words}, port.ts), so that the document
 * cannot accept what the service refuses, or the reverse:
 *
 * - a filter compared in folded form (`author`, `work`, `category`, `genre`) must keep something
 *   once folded: a value of white space and combining marks only is refused;
 * - a word-prefix filter (`author_like`, `work_like`) must hold a word: a letter or digit once
 *   folded (`™` folds to `tm` and counts; `´` folds to nothing);
 * - no value may contain NUL.
 *
 * Folding works character by character (NFKD, mark removal, lower-casing, white space), so a
 * value keeps something, or holds a word, exactly when one of its characters does: the patterns
 * are "some character of this class". The classes are listed code point by code point rather
 * than with `\p{…}` escapes, which API testers translate from their own Unicode version, or not
 * at all: BMP characters as `\uXXXX` escapes and the others as themselves, which ECMA-262 (with
 * the `u` flag, JSON Schema's dialect) and Python's `re` read alike.
 */
import { fold, words } from './catalogue/port.ts';

const LAST_CODE_POINT = 0x10ffff;
const isSurrogate = (cp: number) => cp >= 0xd800 && cp <= 0xdfff;

/** Code points (surrogates aside) that folding removes entirely, and those that fold to a letter or digit. */
export interface TextClasses {
  foldedAway: number[];
  inWords: number[];
}

let classes: TextClasses | undefined;

/**
 * The two classes, computed on first use (a few hundred milliseconds: the OpenAPI document asks
 * for them once). A run of characters that normalisation leaves as they are is classified by
 * the character classes fold and words use (marks and white space, letters and digits); the
 * others one by one, by fold and words themselves.
 */
export function textClasses(): TextClasses {
  if (classes !== undefined) return classes;
  const foldedAway: number[] = [];
  const inWords: number[] = [];
  const plainAway = /[\p{M}\p{White_Space}]/gu;
  const plainWord = /[\p{L}\p{N}]/gu;
  const visit = (start: number, end: number): void => {
    const points: number[] = [];
    for (let cp = start; cp < end; cp++) if (!isSurrogate(cp)) points.push(cp);
    if (points.length === 0) return;
    const run = String.fromCodePoint(...points);
    if (run.normalize('NFKD') === run) {
      for (const match of run.matchAll(plainAway)) foldedAway.push(match[0].codePointAt(0) as number);
      for (const match of run.matchAll(plainWord)) inWords.push(match[0].codePointAt(0) as number);
    } else if (end - start > 16) {
      const middle = start + (end - start) / 2;
      visit(start, middle);
      visit(middle, end);
    } else {
      for (const cp of points) {
        const character = String.fromCodePoint(cp);
        if (fold(character) === '') foldedAway.push(cp);
        if (words(character).length > 0) inWords.push(cp);
      }
    }
  };
  const step = 4096;
  for (let start = 0; start <= LAST_CODE_POINT; start += step) {
    visit(start, Math.min(start + step, LAST_CODE_POINT + 1));
  }
  classes = { foldedAway, inWords };
  return classes;
}

/** A pattern character for a code point, read alike by ECMA-262 (`u`) and Python. */
function character(cp: number): string {
  return cp <= 0xffff ? `\\u${cp.toString(16).padStart(4, '0')}` : String.fromCodePoint(cp);
}

/** The inside of a character class (`[…]`) holding exactly these ascending code points. */
export function classBody(codePoints: readonly number[]): string {
  let body = '';
  for (let i = 0; i < codePoints.length; ) {
    const first = codePoints[i] as number;
    let last = first;
    while (i + 1 < codePoints.length && codePoints[i + 1] === last + 1) last = codePoints[++i] as number;
    i++;
    body += last === first ? character(first) : `${character(first)}-${character(last)}`;
  }
  return body;
}

/** Any character but NUL, which no value may hold. */
const NOT_NUL = '[^\\u0000]*';

/** `author`, `work`, `category`, `genre`: something is left once folded, and no NUL. */
export function foldedTextPattern(): string {
  return `^${NOT_NUL}[^\\u0000${classBody(textClasses().foldedAway)}]${NOT_NUL}$`;
}

/** `author_like`, `work_like`: a letter or digit once folded, and no NUL. */
export function wordTextPattern(): string {
  return `^${NOT_NUL}[${classBody(textClasses().inWords)}]${NOT_NUL}$`;
}

/** A list of `values`, comma-separated, of `min` to `max` items (an exact, anchored pattern). */
export function listPattern(values: readonly string[], max = Number.POSITIVE_INFINITY): string {
  const one = `(?:${values.map(escapeLiteral).join('|')})`;
  const more = max === Number.POSITIVE_INFINITY ? '*' : `{0,${max - 1}}`;
  return `^${one}(?:,${one})${more}$`;
}

/** A word matched in any case (`asc`, `DESC`), without the `i` flag JSON Schema patterns lack. */
export function anyCasePattern(values: readonly string[]): string {
  const anyCase = (value: string) =>
    [...value]
      .map((c) =>
        c.toLowerCase() === c.toUpperCase() ? escapeLiteral(c) : `[${c.toLowerCase()}${c.toUpperCase()}]`,
      )
      .join('');
  return `^(?:${values.map(anyCase).join('|')})$`;
}

function escapeLiteral(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}
