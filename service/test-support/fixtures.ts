/**
 * Hand-made catalogues for tests. {@link FIXTURE_QUOTES} is small enough to reason about by hand
 * and built to make every rule of the contract observable:
 *
 * - accents and punctuation in names (`Charlotte Brontë`, `Flannery O'Connor`, `Jean-Paul Sartre`,
 *   `Émile Zola`, `Søren Kierkegaard` whose `ø` has no decomposition, `Paul Éluard` written with a
 *   combining accent, i.e. decomposed, in the source);
 * - case and spacing: lower-case names (`bell hooks`, `e. e. cummings`), a name with two spaces in
 *   the source (`Oscar  Wilde`), genres and a category whose case varies (`Romance`, `Poetry`);
 * - the same title by two authors (`Poems`: two work_ids);
 * - multi-genre arrays whose first genre differs from the genres a filter matches;
 * - `YYYY`, `YYYY-MM` and `YYYY-MM-DD` dates within one year (1813, 1843, 1847);
 * - ties on author, work and publish_date so that the id tie-breaker is observable;
 * - ids neither contiguous nor in file order, so "sorted by id" differs from "as loaded";
 * - astral characters (an emoji, a musical symbol) so that quote_length counts code points.
 *
 * author_id / work_id follow docs/api.md#the-quote: one author_id per name and one name per id; one
 * work_id per (work, author).
 */
import { codePointLength, type Quote } from '../catalogue/port.ts';

interface Author {
  id: number;
  name: string;
}
interface Work {
  id: number;
  title: string;
  author: Author;
  category: string;
  source: string;
}

const AUTHORS = {
  austen: { id: 7, name: 'Jane Austen' },
  charlotte: { id: 11, name: 'Charlotte Brontë' },
  emily: { id: 12, name: 'Emily Brontë' },
  oconnor: { id: 23, name: "Flannery O'Connor" },
  sartre: { id: 31, name: 'Jean-Paul Sartre' },
  zola: { id: 40, name: 'Émile Zola' },
  kierkegaard: { id: 52, name: 'Søren Kierkegaard' },
  plath: { id: 8, name: 'Sylvia Plath' },
  cummings: { id: 60, name: 'e. e. cummings' },
  hooks: { id: 61, name: 'bell hooks' },
  // Two spaces, as found in the source data: the folded form has one.
  wilde: { id: 3, name: 'Oscar  Wilde' },
  racine: { id: 70, name: 'Jean Racine' },
  // "E" + U+0301 COMBINING ACUTE ACCENT: folds like the precomposed "É".
  eluard: { id: 71, name: 'Paul E\u0301luard' },
  shakespeare: { id: 1, name: 'William Shakespeare' },
  ng: { id: 90, name: 'Zoë Ng' },
} satisfies Record<string, Author>;

const gutenberg = (n: number) => `https://www.gutenberg.org/ebooks/${n}`;
const A = AUTHORS;

const WORKS = {
  pride: {
    id: 101,
    title: 'Pride and Prejudice',
    author: A.austen,
    category: 'fiction',
    source: gutenberg(1342),
  },
  emma: { id: 102, title: 'Emma', author: A.austen, category: 'fiction', source: gutenberg(158) },
  sense: {
    id: 103,
    title: 'Sense and Sensibility',
    author: A.austen,
    category: 'fiction',
    source: gutenberg(161),
  },
  eyre: { id: 201, title: 'Jane Eyre', author: A.charlotte, category: 'fiction', source: gutenberg(1260) },
  villette: { id: 202, title: 'Villette', author: A.charlotte, category: 'fiction', source: gutenberg(9182) },
  wuthering: {
    id: 301,
    title: 'Wuthering Heights',
    author: A.emily,
    category: 'fiction',
    source: gutenberg(768),
  },
  emilyPoems: { id: 302, title: 'Poems', author: A.emily, category: 'poetry', source: gutenberg(1019) },
  goodMan: {
    id: 401,
    title: 'A Good Man Is Hard to Find',
    author: A.oconnor,
    category: 'fiction',
    source: 'https://openlibrary.org/works/OL1937519W',
  },
  wiseBlood: {
    id: 402,
    title: 'Wise Blood',
    author: A.oconnor,
    category: 'fiction',
    source: 'https://openlibrary.org/works/OL1937520W',
  },
  habit: {
    id: 403,
    title: 'The Habit of Being',
    author: A.oconnor,
    category: 'nonfiction',
    source: 'https://openlibrary.org/works/OL1937521W',
  },
  noExit: {
    id: 501,
    title: 'No Exit',
    author: A.sartre,
    category: 'drama',
    source: 'https://openlibrary.org/works/OL1160954W',
  },
  nausea: {
    id: 502,
    title: 'Nausea',
    author: A.sartre,
    category: 'fiction',
    source: 'https://openlibrary.org/works/OL1160955W',
  },
  being: {
    id: 503,
    title: 'Being and Nothingness',
    author: A.sartre,
    category: 'nonfiction',
    source: 'https://openlibrary.org/works/OL1160956W',
  },
  germinal: { id: 601, title: 'Germinal', author: A.zola, category: 'fiction', source: gutenberg(56690) },
  jaccuse: {
    id: 602,
    title: 'J’accuse…!',
    author: A.zola,
    category: 'nonfiction',
    source: 'https://fr.wikisource.org/wiki/J%E2%80%99accuse%E2%80%A6_!',
  },
  fear: {
    id: 701,
    title: 'Fear and Trembling',
    author: A.kierkegaard,
    category: 'nonfiction',
    source: 'https://openlibrary.org/works/OL1120270W',
  },
  eitherOr: {
    id: 702,
    title: 'Either/Or',
    author: A.kierkegaard,
    category: 'nonfiction',
    source: 'https://openlibrary.org/works/OL1120271W',
  },
  journals: {
    id: 703,
    title: 'Journals',
    author: A.kierkegaard,
    category: 'nonfiction',
    source: 'https://openlibrary.org/works/OL1120272W',
  },
  ariel: {
    id: 801,
    title: 'Ariel',
    author: A.plath,
    category: 'poetry',
    source: 'https://openlibrary.org/works/OL274505W',
  },
  bellJar: {
    id: 802,
    title: 'The Bell Jar',
    author: A.plath,
    category: 'fiction',
    source: 'https://openlibrary.org/works/OL274506W',
  },
  tulips: {
    id: 901,
    title: 'Tulips & Chimneys',
    author: A.cummings,
    category: 'Poetry',
    source: 'https://openlibrary.org/works/OL45804W',
  },
  love: {
    id: 1001,
    title: 'All About Love',
    author: A.hooks,
    category: 'nonfiction',
    source: 'https://openlibrary.org/works/OL2700003W',
  },
  earnest: {
    id: 1101,
    title: 'The Importance of Being Earnest',
    author: A.wilde,
    category: 'drama',
    source: gutenberg(844),
  },
  profundis: {
    id: 1102,
    title: 'De Profundis',
    author: A.wilde,
    category: 'nonfiction',
    source: gutenberg(921),
  },
  dorian: {
    id: 1103,
    title: 'The Picture of Dorian Gray',
    author: A.wilde,
    category: 'fiction',
    source: gutenberg(174),
  },
  phedre: { id: 1201, title: 'Phèdre', author: A.racine, category: 'drama', source: gutenberg(1977) },
  liberte: {
    id: 1301,
    title: 'Poésie et vérité 1942',
    author: A.eluard,
    category: 'poetry',
    source: 'https://fr.wikisource.org/wiki/Libert%C3%A9',
  },
  hamlet: { id: 1401, title: 'Hamlet', author: A.shakespeare, category: 'drama', source: gutenberg(1524) },
  sonnets: { id: 1402, title: 'Sonnets', author: A.shakespeare, category: 'poetry', source: gutenberg(1041) },
  willPoems: { id: 1403, title: 'Poems', author: A.shakespeare, category: 'poetry', source: gutenberg(1045) },
  smallHours: {
    id: 1501,
    title: 'Small Hours',
    author: A.ng,
    category: 'poetry',
    source: 'https://example.org/zoe-ng/small-hours',
  },
} satisfies Record<string, Work>;

const W = WORKS;

/** The quotes written in French (Zola's J'accuse, Racine, Éluard); every other one is in English. */
const FRENCH = new Set([9, 250, 33]);

function q(id: number, work: Work, genre: string[], publishDate: string, text: string): Quote {
  return {
    id,
    author: work.author.name,
    author_id: work.author.id,
    work: work.title,
    work_id: work.id,
    category: work.category,
    genre,
    publish_date: publishDate,
    quote_length: codePointLength(text),
    source: work.source,
    quote: text,
    language: FRENCH.has(id) ? 'fr' : 'en',
  };
}

/** The fixture catalogue, in "file order" (deliberately not id order). */
export const FIXTURE_QUOTES: Quote[] = [
  q(
    42,
    W.pride,
    ['Romance', 'satire'],
    '1813-01-28',
    'It is a truth universally acknowledged, that a single man who is master of a good fortune, must be in want of a wife.',
  ),
  q(
    7,
    W.pride,
    ['romance', 'satire'],
    '1813-01-28',
    'I declare after all there is no enjoyment like reading!',
  ),
  q(
    130,
    W.pride,
    ['romance', 'satire'],
    '1813',
    'Vanity and pride are different things, though the words are often used synonymously.',
  ),
  q(
    5,
    W.pride,
    ['romance', 'satire'],
    '1813-01-28',
    'There is a stubbornness about me that never can bear to be frightened at the will of others.',
  ),
  q(
    19,
    W.emma,
    ['comedy', 'romance'],
    '1815-12',
    'Silly things do cease to be silly if they are done by sensible people in an impudent way.',
  ),
  q(88, W.sense, ['romance'], '1811', 'Know your own happiness.'),
  q(
    3,
    W.eyre,
    ['gothic', 'romance', 'bildungsroman'],
    '1847-10-16',
    'I am no bird; and no net ensnares me: I am a free human being with an independent will.',
  ),
  q(56, W.eyre, ['gothic', 'romance', 'bildungsroman'], '1847', 'Reader, I married him.'),
  q(
    211,
    W.eyre,
    ['gothic', 'romance', 'bildungsroman'],
    '1847-10',
    'Life appears to me too short to be spent in nursing animosity or registering wrongs.',
  ),
  q(
    64,
    W.villette,
    ['psychological', 'romance'],
    '1853-01',
    'I, Lucy Snowe, plead guiltless of that curse, an overheated and discursive imagination.',
  ),
  q(
    150,
    W.wuthering,
    ['gothic', 'tragedy'],
    '1847-12',
    'Whatever our souls are made of, his and mine are the same.',
  ),
  q(23, W.wuthering, ['gothic', 'tragedy'], '1847-12', 'Be with me always—take any form—drive me mad!'),
  q(
    97,
    W.wuthering,
    ['Gothic', 'tragedy'],
    '1847-12',
    'I have dreamt in my life, dreams that have stayed with me ever after, and changed my ideas.',
  ),
  q(
    12,
    W.emilyPoems,
    ['lyric'],
    '1846-05',
    'No coward soul is mine, no trembler in the world’s storm-troubled sphere.',
  ),
  q(
    140,
    W.goodMan,
    ['southern gothic', 'short story'],
    '1955',
    'She would of been a good woman, if it had been somebody there to shoot her every minute of her life.',
  ),
  q(
    31,
    W.wiseBlood,
    ['southern gothic', 'satire'],
    '1952-05-15',
    'Where you came from is gone, where you thought you were going to never was there.',
  ),
  q(77, W.habit, ['letters'], '1979', 'The truth does not change according to our ability to stomach it.'),
  q(2, W.noExit, ['existentialism'], '1944-05-27', 'Hell is other people!'),
  q(
    99,
    W.nausea,
    ['philosophical', 'existentialism'],
    '1938',
    'I exist, that is all, and I find it nauseating.',
  ),
  q(120, W.being, ['philosophy', 'existentialism'], '1943', 'I am condemned to be free.'),
  q(
    66,
    W.germinal,
    ['naturalism', 'social'],
    '1885-03',
    'Men were springing up, a black avenging army, germinating slowly in the furrows.',
  ),
  q(9, W.jaccuse, ['polemic', 'journalism'], '1898-01-13', 'La vérité est en marche, et rien ne l’arrêtera.'),
  q(180, W.fear, ['philosophy', 'theology'], '1843-10-16', 'Faith is the highest passion in a person.'),
  q(
    14,
    W.eitherOr,
    ['philosophy', 'Existentialism'],
    '1843-02-20',
    'Marry, and you will regret it; do not marry, and you will also regret it.',
  ),
  q(
    101,
    W.journals,
    ['diary', 'philosophy'],
    '1843',
    'Life can only be understood backwards; but it must be lived forwards.',
  ),
  q(45, W.ariel, ['confessional'], '1965', 'Dying is an art, like everything else.'),
  q(
    200,
    W.bellJar,
    ['autobiographical', 'psychological'],
    '1963-01-14',
    'I took a deep breath and listened to the old brag of my heart. I am, I am, I am.',
  ),
  q(
    28,
    W.tulips,
    ['modernist'],
    '1923',
    'since feeling is first 🌷 who pays any attention to the syntax of things',
  ),
  q(301, W.love, ['feminism', 'essay'], '2000', 'Love is as love does.'),
  q(17, W.earnest, ['comedy', 'satire'], '1895-02-14', 'The truth is rarely pure and never simple.'),
  q(
    90,
    W.earnest,
    ['comedy', 'satire'],
    '1895-02-14',
    'I never travel without my diary. One should always have something sensational to read in the train.',
  ),
  q(74, W.profundis, ['letters', 'autobiographical'], '1905', 'Most people are other people.'),
  q(
    110,
    W.dorian,
    ['gothic', 'philosophical'],
    '1890-06-20',
    'The only way to get rid of a temptation is to yield to it.',
  ),
  q(
    6,
    W.dorian,
    ['gothic', 'philosophical'],
    '1890-06-20',
    'There is only one thing in the world worse than being talked about.',
  ),
  q(250, W.phedre, ['tragedy'], '1677-01-01', 'C’est Vénus tout entière à sa proie attachée.'),
  q(
    33,
    W.liberte,
    ['résistance', 'lyric'],
    '1942',
    'Sur mes cahiers d’écolier, sur mon pupitre et les arbres, j’écris ton nom.',
  ),
  q(1, W.hamlet, ['tragedy'], '1603', 'To be, or not to be, that is the question.'),
  q(144, W.hamlet, ['tragedy'], '1603', 'Brevity is the soul of wit.'),
  q(44, W.hamlet, ['Tragedy', 'revenge'], '1603', 'Though this be madness, yet there is method in’t.'),
  q(60, W.sonnets, ['lyric', 'sonnet'], '1609-05-20', 'Shall I compare thee to a summer’s day?'),
  q(81, W.willPoems, ['narrative', 'lyric'], '1640', 'Love comforteth like sunshine after rain.'),
  q(57, W.smallHours, ['lyric', 'micro'], '2021-03', 'I keep the moon 🌙 in a jar of 𝄞 songs.'),
];

/** Options of {@link syntheticQuotes}. */
export interface SyntheticOptions {
  /** Written into every quote's text, author and work, so a reader can tell catalogues apart. */
  label?: string;
  /** Id of the first quote; ids then step by `idStep`. */
  firstId?: number;
  idStep?: number;
}

const CATEGORIES = ['fiction', 'nonfiction', 'poetry', 'drama'] as const;
const GENRES = ['romance', 'gothic', 'satire', 'tragedy', 'lyric', 'essay', 'comedy'] as const;
/** One language per author, so that every work keeps one. */
const LANGUAGES = ['en', 'fr', 'de', 'es', 'en'] as const;

/**
 * A deterministic catalogue of `count` quotes, contract-valid (author_id/work_id rules included),
 * for tests that need a catalogue of a given size or a recognisable label (e.g. "every quote of
 * catalogue A says A"). Generated lazily so large counts never sit in memory at once.
 */
export function* syntheticQuotes(count: number, options: SyntheticOptions = {}): Generator<Quote> {
  const label = options.label ?? 'S';
  const firstId = options.firstId ?? 1;
  const step = options.idStep ?? 1;
  for (let i = 0; i < count; i++) {
    const authorId = (i % 97) + 1;
    const workIndex = i % 389;
    const text = `${label} quote ${i}`;
    yield {
      id: firstId + i * step,
      author: `${label} Author ${authorId}`,
      author_id: authorId,
      work: `${label} Work ${workIndex}`,
      // One work_id per (work, author): the title index and the author id together.
      work_id: workIndex * 100 + authorId,
      category: CATEGORIES[i % CATEGORIES.length] as string,
      genre: [GENRES[i % GENRES.length] as string, GENRES[(i + 3) % GENRES.length] as string],
      publish_date: `${1800 + (i % 200)}-${String((i % 12) + 1).padStart(2, '0')}`,
      quote_length: codePointLength(text),
      source: `https://example.org/${label}/${i}`,
      quote: text,
      language: LANGUAGES[authorId % LANGUAGES.length] as string,
    };
  }
}
