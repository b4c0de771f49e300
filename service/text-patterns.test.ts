import { describe, expect, it } from 'vitest';
import { fold, words } from './catalogue/port.ts';
import { foldedTextPattern, textClasses, wordTextPattern } from './text-patterns.ts';

describe('text classes', () => {
  it('hold exactly the code points that fold removes, and those that fold to a letter or digit', () => {
    const { foldedAway, inWords } = textClasses();
    const away = new Set(foldedAway);
    const wordy = new Set(inWords);
    const wrong: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const character = String.fromCodePoint(cp);
      if ((fold(character) === '') !== away.has(cp)) wrong.push(`U+${cp.toString(16)} folded away`);
      if (words(character).length > 0 !== wordy.has(cp)) wrong.push(`U+${cp.toString(16)} in words`);
    }
    expect(wrong.slice(0, 20)).toEqual([]);
    // Sorted, as the patterns' ranges need.
    expect(foldedAway).toEqual([...foldedAway].sort((a, b) => a - b));
    expect(inWords).toEqual([...inWords].sort((a, b) => a - b));
  });

  it('make patterns that test a value as the validation does', () => {
    const folded = new RegExp(foldedTextPattern(), 'u');
    const word = new RegExp(wordTextPattern(), 'u');
    const cases: [string, boolean, boolean][] = [
      ['Jane Austen', true, true],
      ['\u0301 \t', false, false],
      ['´', false, false],
      ['™', true, true],
      ['-', true, false],
      ['\ufeff', true, false],
      ['𝒜', true, true],
      ['a\u0000', false, false],
    ];
    for (const [value, keeps, hasWord] of cases) {
      expect([folded.test(value), word.test(value)], JSON.stringify(value)).toEqual([keeps, hasWord]);
      expect(fold(value) !== '' && !value.includes('\0')).toBe(keeps);
      expect(words(value).length > 0 && !value.includes('\0')).toBe(hasWord);
    }
  });
});
