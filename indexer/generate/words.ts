/** The words of the generated catalogue: author names, work titles and genres. */
import { fold } from '../../service/catalogue/port.ts';
import { choose, type Random, type Table, table } from './random.ts';

/** A word list written as `a | b | c` over lines (entries may hold spaces, never bars or newlines). */
export function list(text: string): readonly string[] {
  return text
    .split(/[|\n]/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

// ---------------------------------------------------------------------------------------------
// Author names

const FIRST_NAMES = list(`
  Jane | Charlotte | Emily | Anne | George | Mary | William | Virginia | James | Henry | Thomas
  Edith | Herman | Walt | Toni | Ursula | Doris | Iris | Oscar | Samuel | John | Elizabeth
  Margaret | Katherine | Sylvia | Langston | Zora | Ralph | Flannery | Truman | Zoë | Émile | José
  Søren | Jean-Paul | Anaïs | François | Chloé | Björn | Åsa | Jürgen | Gabriel | Gabriela | Inés
  Joaquín | Ramón | Sofía | Mário | João | Fernão | Léa | Hélène | Simone | Marguerite | Honoré
  Stéphane | Jérôme | André | René | Renée | Noël | Gaël | Michał | Łukasz | Wisława | Czesław
  Bohumil | Milan | Jiří | Dóra | Sándor | Endre | Fyodor | Anton | Leo | Anna | Marina | Nikolai
  Olga | Ivan | Halldór | Sigríður | Knut | Henrik | Selma | Astrid | Tove | Karin | Giovanni
  Dante | Elsa | Italo | Natalia | Umberto | Primo | Hermann | Rainer | Günter | Ingeborg | Franz
  Heinrich | Chinua | Wole | Ngũgĩ | Chimamanda | Nadine | Naguib | Orhan | Elif | Nazım | Haruki
  Yukio | Kenzaburō | Banana | Mo | Lu | Mei | Arundhati | Rabindranath | Salman | Kiran | Jhumpa
  Octavio | Jorge | Julio | Mario | Isabel | Pablo | Rosalía | Federico | Clarice | Maya | Seamus
  Siobhán | Máire | Eavan | Brendan | Aoife | Tadhg | Dylan | Gwen | Rhys
`);

const LAST_NAMES = list(`
  Austen | Brontë | Eliot | Woolf | Joyce | Hardy | Wharton | Melville | Whitman | Morrison
  Le Guin | Lessing | Murdoch | Wilde | Beckett | Shelley | Mansfield | Plath | Hughes | Hurston
  Ellison | O'Connor | O'Brien | O'Casey | D'Annunzio | L'Engle | Capote | Keats | Zola | Sartre
  Kierkegaard | Nin | Mauriac | Balzac | Mallarmé | Camus | Pérez | García | Márquez | Cortázar
  Borges | Neruda | Lorca | Allende | Saramago | Pessoa | Lispector | Núñez | Muñoz | Ibáñez
  Gómez | Martínez | Sánchez | Gonçalves | Magalhães | Camões | Szymborska | Miłosz | Lem
  Żeromski | Hrabal | Kundera | Čapek | Hašek | Márai | Ady | Dostoevsky | Chekhov | Tolstoy
  Akhmatova | Tsvetaeva | Gogol | Turgenev | Laxness | Lagerlöf | Lindgren | Jansson | Boye
  Hamsun | Undset | Strindberg | Ørsted | Bjørnson | Boccaccio | Alighieri | Morante | Calvino
  Ginzburg | Eco | Levi | Hesse | Rilke | Grass | Bachmann | Kafka | Böll | Müller | Mann | Achebe
  Soyinka | Adichie | Gordimer | Mahfouz | Pamuk | Şafak | Hikmet | Murakami | Mishima | Ōe
  Yoshimoto | Ng | Yan | Xun | Roy | Tagore | Rushdie | Desai | Lahiri | Paz | Fuentes | Rulfo
  Heaney | Ní Dhomhnaill | Boland | Behan | Thomas | Evans | Nguyễn | Trần | Lê | Çelik | Yılmaz
  Ångström | Ekström | Fontaine | Lévi | Bérénger | Duras | Colette | Proust | Hugo | Verne
  Stendhal
`);

/** Prefixed to a last name now and then: `van der Berg`, `de la Cruz`. */
const PARTICLES = ['van', 'van der', 'van den', 'de', 'de la', 'del', 'da', 'di', 'von', 'le', 'du', 'ter'];
const PARTICLE_NAMES = list(`
  Berg | Cruz | Velde | Heuvel | Vega | Rosa | Silva | Lampedusa | Kleist | Fanu | Bellay | Horst
`);
const INITIALS = 'ABCDEFGHIJKLMNOPRSTVWZ';

/**
 * A name no other author has, compared in folded form (so `Zoe Bronte` and `Zoë Brontë` never
 * both exist): middle initials tell namesakes apart, as library catalogues do.
 */
export function uniqueName(rng: Random, used: Set<string>): string {
  const first = rng.pick(FIRST_NAMES);
  const roll = rng.float();
  const last =
    roll < 0.08
      ? `${rng.pick(PARTICLES)} ${rng.pick(PARTICLE_NAMES)}`
      : roll < 0.13
        ? `${rng.pick(LAST_NAMES)}-${rng.pick(LAST_NAMES)}`
        : rng.pick(LAST_NAMES);
  if (claim(used, `${first} ${last}`)) return `${first} ${last}`;
  const initials = shuffledInitials(rng);
  for (const middle of initials) {
    if (claim(used, `${first} ${middle} ${last}`)) return `${first} ${middle} ${last}`;
  }
  for (const middle of initials) {
    for (const second of initials) {
      if (claim(used, `${first} ${middle} ${second} ${last}`)) return `${first} ${middle} ${second} ${last}`;
    }
  }
  // Unreachable below MAX_AUTHORS: every (first, last) pair offers hundreds of variants.
  throw new Error(`no free name left for ${first} ${last}`);
}

function shuffledInitials(rng: Random): string[] {
  return Array.from(rng.permutation(INITIALS.length), (i) => `${INITIALS[i]}.`);
}

/** Adds the folded form of `text` to `used`; false when it was already there. */
function claim(used: Set<string>, text: string): boolean {
  const key = fold(text);
  if (used.has(key)) return false;
  used.add(key);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Work titles

const TITLE_NOUNS = list(`
  River | Night | Garden | Silence | Winter | Mirror | Stranger | House | Sea | Light | Shadow
  Memory | Clock | Orchard | Island | Letter | Song | Storm | Bell | Harvest | Crown | Empire
  Journey | Window | Fire | Ashes | Dream | Road | Season | Widow | Pilgrim | Lantern | Mountain
  Wolf | Raven | Tide | Voyage | Exile | Café | Soirée | Fiancée | Naïveté | Élan | Façade
  Protégé | Château | Fjord | Daughter | Father | Orphan | Sailor | Inheritance | Bridge | Harbour
  Forest | Desert | Tower | Promise | Masquerade | Labyrinth | Carnival | Requiem | Sonata
  Anatomy | Education | Rebellion
`);
const TITLE_ADJECTIVES = list(`
  Silent | Last | Broken | Golden | Hidden | Long | Distant | Bitter | Little | Secret | Forgotten
  Quiet | Burning | Invisible | Savage | Gentle | Crimson | Northern | Sleeping | Naïve | Blasé
  Errant | Wandering | Drowned | Sentimental | Unfinished | Second | Iron
`);
const PLACES = list(`
  Zürich | Kraków | Málaga | São Paulo | Reykjavík | Montréal | Córdoba | Tromsø | Besançon
  Dublin | Prague | Lisbon | Kyoto | Lagos | Odessa | Vienna | Gdańsk | Göteborg | Sevilla
  Bogotá | Mérida | Alexandria | Trieste | Samarkand | Valparaíso | Côte d'Ivoire | Hà Nội
`);
const CHARACTER_NAMES = list(`
  Hedda | Medea | Célestine | Ophélie | Tomás | Irène | Oedipus | Yerma | Nora | Ödön
`);
const NUMBER_WORDS = ['Two', 'Three', 'Seven', 'Twelve', 'Forty', 'Hundred'];

/**
 * Title patterns per category, with weights. Slots: {N} noun, {A} adjective, {P} place,
 * {C} character, {#} number word.
 */
const TITLE_PATTERNS: Record<string, Table<string>> = {
  fiction: table([
    ['The {N}', 3],
    ['The {A} {N}', 4],
    ['{N} and {N}', 3],
    ['The {N} of the {A} {N}', 2],
    ['A {N} in {P}', 2],
    ['{A} {N}', 2],
    ["The {N}'s {N}", 1],
  ]),
  poetry: table([
    ['Songs of the {N}', 3],
    ['Elegies for {P}', 2],
    ['{#} Sonnets', 1],
    ['The {A} {N} and Other Poems', 3],
    ['Odes to {N} and {N}', 2],
    ['The {A} {N}', 3],
    ['{N}', 2],
  ]),
  drama: table([
    ['{C}', 2],
    ['The {N}: A Tragedy', 2],
    ['{C} in {P}', 2],
    ['A {N} for {C}', 2],
    ['The {A} {N}', 3],
    ['{N} and {N}', 2],
  ]),
  nonfiction: table([
    ['Essays on {N}', 3],
    ['A History of {P}', 2],
    ['On {N}', 2],
    ['The Philosophy of {N}', 2],
    ['Letters from {P}', 2],
    ['Notes on the {A} {N}', 2],
    ['The {N} and the {N}', 2],
  ]),
};
const SLOTS: Record<string, readonly string[]> = {
  N: TITLE_NOUNS,
  A: TITLE_ADJECTIVES,
  P: PLACES,
  C: CHARACTER_NAMES,
  '#': NUMBER_WORDS,
};

function title(rng: Random, category: string): string {
  const patterns = TITLE_PATTERNS[category] ?? (TITLE_PATTERNS.fiction as Table<string>);
  return choose(rng, patterns).replace(/\{(.)\}/g, (_, slot: string) => rng.pick(SLOTS[slot] ?? []));
}

/** A title this author has not used yet (folded), so that (work, author) names one work. */
export function uniqueTitle(rng: Random, category: string, used: Set<string>): string {
  for (let attempt = 0; attempt < 8; attempt++) {
    const candidate = title(rng, category);
    if (claim(used, candidate)) return candidate;
  }
  // A prolific author ran out of luck with the patterns: number the volumes, as publishers do.
  const base = title(rng, category);
  for (let volume = 2; ; volume++) {
    if (claim(used, `${base}, Volume ${volume}`)) return `${base}, Volume ${volume}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Genres: 62 in all, most tied to a category, a few that any category borrows.

const GENRES: Record<string, readonly string[]> = {
  fiction: list(`
    literary fiction | historical fiction | science fiction | fantasy | mystery | romance | crime
    thriller | horror | adventure | gothic | magical realism | dystopian | coming-of-age
    Bildungsroman | roman à clef | epistolary | picaresque | noir | children's literature
  `),
  nonfiction: list(`
    philosophy | history | biography | memoir | essay | science | politics | religion | economics
    psychology | travel | nature writing | ethics | journalism | sociology | art criticism
  `),
  poetry: list(`
    lyric poetry | epic poetry | sonnet | free verse | haiku | elegy | ode | ballad | pastoral
    romantic poetry | modernist poetry | chanson de geste
  `),
  drama: list(`
    tragedy | comedy | tragicomedy | farce | melodrama | absurdist drama | historical drama
    commedia dell'arte
  `),
};
const SHARED_GENRES = list('satire | humor | allegory | mythology | classics | feminism');
const GENRE_COUNT = table([
  [1, 50],
  [2, 35],
  [3, 15],
] as const);

/** One to three distinct genres, the category's first-listed (popular) ones most often. */
export function pickGenres(rng: Random, category: string): string[] {
  const own = GENRES[category] ?? (GENRES.fiction as readonly string[]);
  const n = choose(rng, GENRE_COUNT);
  const out: string[] = [];
  while (out.length < n) {
    const genre = rng.chance(0.12)
      ? rng.pick(SHARED_GENRES)
      : (own[Math.floor(rng.float() ** 2 * own.length)] as string);
    if (!out.includes(genre)) out.push(genre);
  }
  return out;
}
