import { clamp, type Random } from './random.ts';
import { list } from './words.ts';

/** Quote texts are between these lengths, in Unicode code points. */
export const QUOTE_MIN_LENGTH = 40;
export const QUOTE_MAX_LENGTH = 600;

// ---------------------------------------------------------------------------------------------
// Quote texts: pseudo-sentences from a small grammar over word lists.
//
// Texts are assembled from words encoded to UTF-8 once, in a reused buffer: building them as
// strings cost most of the generator's time in concatenating and then flattening many small
// strings. The object API decodes the buffer; the NDJSON writer copies the bytes as they are.

/** A word or literal, pre-encoded: its UTF-8 bytes and its length in code points. */
interface Piece {
  bytes: Uint8Array;
  points: number;
  /** Takes the article `an` (vowel, accented vowel, silent h). */
  an: boolean;
}

const TAKES_AN = /^(?:[aeiouàâéèêîôûü]|hon)/;

/**
 * Encodes one piece of text. Pieces may not hold characters JSON escapes (quotation mark,
 * backslash, controls), so a text made of them is valid inside a JSON string as it stands.
 */
function piece(text: string): Piece {
  if (JSON.stringify(text) !== `"${text}"`) throw new Error(`word list entry needs JSON escaping: ${text}`);
  let points = 0;
  for (const _ of text) points++;
  return { bytes: Buffer.from(text), points, an: TAKES_AN.test(text) };
}

function pieces(texts: readonly string[]): Piece[] {
  return texts.map(piece);
}

/** A quote under construction: UTF-8 bytes in a reused buffer, and its length in code points. */
export class TextBuilder {
  // Room for the longest text plus one sentence that is then rolled back, 3 bytes per code point.
  readonly #bytes = Buffer.allocUnsafe(8 * QUOTE_MAX_LENGTH);
  /** Length in bytes. */
  length = 0;
  /** Length in code points. */
  points = 0;

  add(piece: Piece): void {
    const bytes = this.#bytes;
    const source = piece.bytes;
    let at = this.length;
    for (let i = 0; i < source.length; i++) bytes[at++] = source[i] as number;
    this.length = at;
    this.points += piece.points;
  }

  /** Copies the text into `target` at `offset`; returns the offset after it. */
  copyTo(target: Buffer, offset: number): number {
    return offset + this.#bytes.copy(target, offset, 0, this.length);
  }

  toString(): string {
    return this.#bytes.toString('utf8', 0, this.length);
  }
}

const DETERMINERS = list(`
  the | the | the | a | every | no | this | that | my | your | his | her | our | their | one
`);
const ADJECTIVES = list(`
  old | quiet | bright | last | small | strange | cruel | kind | tender | bitter | endless
  patient | broken | honest | hidden | wild | gentle | foolish | wise | restless | silent | empty
  golden | forgotten | familiar | distant | unspoken | ordinary | proud | lonely | true | false
  dark | pale | sudden | slow | ancient | hungry | faithful | weary | secret | burning | cold
`);
const NOUNS = list(`
  heart | river | night | house | letter | voice | window | garden | city | sea | road | name
  door | child | stranger | friend | mother | father | king | soldier | poet | book | morning
  evening | winter | summer | storm | mirror | shadow | candle | song | silence | promise | secret
  grave | fire | mountain | harbour | bridge | clock | field | wound | island | lamp | sister
  brother | widow | ship | wall | bread | rain | snow | stone | bird | horse | ghost | crown
`);
/** Borrowed words, drawn now and then instead of an English one: where most accents come from. */
const LOANWORD_RATE = 0.05;
const LOAN_ADJECTIVES = list('naïve | blasé | passé | outré | soigné | déclassé | risqué | über-cool');
const LOAN_NOUNS = list(`
  café | rôle | élan | façade | fiancée | soirée | protégé | mêlée | naïveté | crème brûlée
  déjà vu | tête-à-tête | smörgåsbord | fjord | piñata | jalapeño | señora | über-critic | doppelgänger
`);
const ABSTRACT = list(`
  love | time | memory | truth | hope | grief | silence | beauty | courage | solitude | freedom
  history | desire | fear | joy | death | justice | patience | pride | longing
`);
const PRONOUNS = list('he | she | it | nobody | everyone | someone');
const VERBS = list(`
  remembers | forgets | becomes | carries | follows | waits for | breaks | keeps | loses | finds
  loves | fears | hides | teaches | returns to | speaks of | dreams of | forgives | betrays
  outlives | mistakes | reveals | devours | answers | resembles | longs for
`);
const ADVERBS = list(`
  slowly | always | never | quietly | still | again | perhaps | only | already | tenderly
  at last
`);

const FOREIGN = list(`
  c'est la vie | je ne sais quoi | carpe diem | raison d’être | joie de vivre | Weltschmerz
  saudade | mañana | à bientôt | noblesse oblige | Schadenfreude | amor fati | déjà vu
  dolce far niente | l’esprit de l’escalier | Sehnsucht | tout passe | ¿y por qué no?
`);

/** Lower-case forms for inside a sentence and capitalised forms for its start, encoded once. */
function forms(texts: readonly string[]): { inner: Piece[]; initial: Piece[] } {
  return { inner: pieces(texts), initial: pieces(texts.map(capitalise)) };
}

const W = {
  determiners: forms(DETERMINERS),
  adjectives: pieces(ADJECTIVES),
  nouns: pieces(NOUNS),
  loanAdjectives: pieces(LOAN_ADJECTIVES),
  loanNouns: pieces(LOAN_NOUNS),
  abstract: forms(ABSTRACT),
  pronouns: forms(PRONOUNS),
  verbs: pieces(VERBS),
  adverbs: forms(ADVERBS),
  foreign: forms(FOREIGN),
  conjunctions: pieces([', and ', ', but ', '; ', ' — ', ', for ', ', yet ', ', so ']),
};
const L = {
  space: piece(' '),
  line: piece(' / '),
  an: piece('an'),
  An: piece('An'),
  is: piece(' is '),
  of: piece(' of '),
  commaSpace: piece(', '),
  said: piece(' said.'),
  saidOpen: piece(' said, “'),
  closeQuote: piece('.”'),
  thereIsNo: piece('There is no '),
  without: piece(' without '),
  whatIs: piece('What is '),
  but: piece(' but '),
  period: piece('.'),
  question: piece('?'),
  exclamation: piece('!'),
  ellipsis: piece('…'),
};

function pick(rng: Random, items: readonly Piece[]): Piece {
  return items[rng.int(items.length)] as Piece;
}

function nounPhrase(rng: Random, t: TextBuilder, initial: boolean): void {
  if (rng.chance(0.2)) {
    t.add(pick(rng, initial ? W.abstract.initial : W.abstract.inner));
    return;
  }
  const noun = pick(rng, rng.chance(LOANWORD_RATE) ? W.loanNouns : W.nouns);
  const adjective = rng.chance(0.45)
    ? pick(rng, rng.chance(LOANWORD_RATE) ? W.loanAdjectives : W.adjectives)
    : null;
  const d = rng.int(DETERMINERS.length);
  if (DETERMINERS[d] === 'a' && (adjective ?? noun).an) t.add(initial ? L.An : L.an);
  else t.add((initial ? W.determiners.initial : W.determiners.inner)[d] as Piece);
  t.add(L.space);
  if (adjective !== null) {
    t.add(adjective);
    t.add(L.space);
  }
  t.add(noun);
}

function subject(rng: Random, t: TextBuilder, initial: boolean): void {
  if (rng.chance(0.25)) t.add(pick(rng, initial ? W.pronouns.initial : W.pronouns.inner));
  else nounPhrase(rng, t, initial);
}

function clause(rng: Random, t: TextBuilder, initial: boolean): void {
  const kind = rng.int(6);
  subject(rng, t, initial);
  if (kind === 1) {
    t.add(L.is);
    t.add(pick(rng, W.adjectives));
    return;
  }
  t.add(L.space);
  if (kind === 0) {
    t.add(pick(rng, W.adverbs.inner));
    t.add(L.space);
  }
  t.add(pick(rng, W.verbs));
  t.add(L.space);
  nounPhrase(rng, t, false);
  if (kind === 2) {
    t.add(L.of);
    nounPhrase(rng, t, false);
  }
}

function sentence(rng: Random, t: TextBuilder): void {
  const kind = rng.int(20);
  if (kind === 0) {
    const a = rng.int(ABSTRACT.length);
    const b = (a + 1 + rng.int(ABSTRACT.length - 1)) % ABSTRACT.length;
    t.add(L.thereIsNo);
    t.add(W.abstract.inner[a] as Piece);
    t.add(L.without);
    t.add(W.abstract.inner[b] as Piece);
    t.add(L.period);
  } else if (kind === 1) {
    t.add(L.whatIs);
    t.add(pick(rng, W.abstract.inner));
    t.add(L.but);
    nounPhrase(rng, t, false);
    t.add(L.question);
  } else if (kind === 2) {
    t.add(pick(rng, W.foreign.initial));
    t.add(L.commaSpace);
    t.add(pick(rng, W.pronouns.inner));
    t.add(L.said);
  } else if (kind === 3) {
    subject(rng, t, true);
    t.add(L.saidOpen);
    clause(rng, t, true);
    t.add(L.closeQuote);
  } else {
    if (kind === 4) {
      t.add(pick(rng, W.adverbs.initial));
      t.add(L.commaSpace);
      clause(rng, t, false);
    } else {
      clause(rng, t, true);
    }
    if (rng.chance(0.4)) {
      t.add(pick(rng, W.conjunctions));
      clause(rng, t, false);
    }
    const end = rng.float();
    t.add(end < 0.85 ? L.period : end < 0.93 ? L.exclamation : L.ellipsis);
  }
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * Writes into `t` a quote of 40 to 600 code points, log-normal around 130: many short
 * aphorisms, a long tail of passages. Sentences are added until the drawn length is reached;
 * one that would pass the maximum is taken back (any one sentence is far shorter than the
 * 560 code points that leaves). Verse is quoted as lines joined by " / ", as collections print it.
 */
export function quoteText(rng: Random, t: TextBuilder, verse: boolean): void {
  const target = clamp(Math.round(130 * Math.exp(0.6 * rng.normal())), QUOTE_MIN_LENGTH, QUOTE_MAX_LENGTH);
  t.length = 0;
  t.points = 0;
  sentence(rng, t);
  while (t.points < target) {
    const { length, points } = t;
    t.add(verse ? L.line : L.space);
    sentence(rng, t);
    if (t.points > QUOTE_MAX_LENGTH) {
      t.length = length;
      t.points = points;
      break;
    }
  }
}
