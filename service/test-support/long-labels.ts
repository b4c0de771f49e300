/**
 * A catalogue whose authors, works, categories and genres share long beginnings: values that
 * agree on their first 468 UTF-8 bytes or more (past what a search engine keeps of a sort string),
 * in 1-, 2-, 3- and 4-byte characters, values of exactly such lengths, values that are prefixes of
 * others, white space and control characters where a long value would be cut, and spellings that
 * fold to the same value. Not a test file itself.
 */
import type { Quote } from '../catalogue/port.ts';

const rep = (text: string, times: number) => text.repeat(times);
/** A long phrase of short words: a long value needs no long word to share its beginning. */
const PHRASE = rep('the same long beginning of a title ', 14);

export const LONG_LABELS: readonly string[] = [
  `${rep('a', 470)} beta`,
  `${rep('a', 470)} alpha`,
  `${rep('a', 470)} aardvark`,
  // Folds to the value above it: ties broken by id.
  `${rep('Ａ', 470)} alpha`,
  'Plain Author',
  `${rep('Ø', 240)} b`,
  `${rep('Ø', 240)} a`,
  `${rep('ø', 240)} a`,
  `${rep('語', 160)} 乙`,
  `${rep('語', 160)} 甲`,
  `${rep('😀', 120)} b`,
  `${rep('😀', 120)} a`,
  rep('b', 467),
  rep('b', 468),
  rep('b', 469),
  `${rep('b', 468)}a`,
  rep('c', 600),
  `${rep('c', 600)} x`,
  // Differ at byte 399: one character there is 1 byte long, the other 3.
  `${rep('d', 399)}€z`,
  `${rep('d', 399)}az`,
  rep('d', 399),
  rep('d', 400),
  `${rep('e', 399)} f`,
  rep('e', 399),
  `${rep('e', 400)} f`,
  `${rep('e', 399)}\u0001`,
  `${rep('e', 401)}\u0001`,
  `${PHRASE}one`,
  `${PHRASE}two`,
  `${PHRASE}One`,
  `${PHRASE}  one`,
  `${rep('語', 330)} b`,
  `${rep('語', 330)} a`,
  `${rep('z', 999)}`,
  `${rep('z', 998)}a`,
  `${rep('É', 470)} x`,
  `${rep('e', 470)} x`,
  `${PHRASE}${rep('語 ', 300)}b`,
  `${PHRASE}${rep('語 ', 300)}a`,
];

/**
 * `count` quotes spreading the labels over every text field, each field in another order, so
 * that every sort meets ties on long values; ids are not in the labels' order.
 */
export function longLabelQuotes(count: number): Quote[] {
  const n = LONG_LABELS.length;
  // A label index per field, spread independently of the others.
  const pick = (i: number, salt: number) => {
    let h = Math.imul(i + 1, 0x85ebca6b) ^ salt;
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return ((h ^ (h >>> 16)) >>> 0) % n;
  };
  return Array.from({ length: count }, (_, i) => {
    const text = `quote ${rep('x', i % 23)}`;
    const [author, work, category, genre, second] = [1, 2, 3, 4, 5].map((salt) => pick(i, salt * 7919));
    return {
      id: 1 + ((i * 7919) % (count * 3)),
      author: LONG_LABELS[author as number] as string,
      author_id: 1 + (author as number),
      work: LONG_LABELS[work as number] as string,
      work_id: 1 + (work as number),
      category: LONG_LABELS[category as number] as string,
      genre: [LONG_LABELS[genre as number] as string, LONG_LABELS[second as number] as string],
      publish_date: `${1800 + (i % 200)}`,
      quote_length: Array.from(text).length,
      source: 'https://example.org/long',
      quote: text,
      language: 'en',
    };
  });
}
