import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexFile } from '../indexer/index-file.ts';
import { buildApp } from './app.ts';
import { loadConfig } from './config.ts';
import { type Finished, runProcess } from './test-support/processes.ts';

/** Every parameter `/quotes` accepts, as docs/api.md#listing-quotes lists them. */
const LIST_PARAMETERS = [
  'author',
  'author_id',
  'author_like',
  'work',
  'work_id',
  'work_like',
  'category',
  'genre',
  'q',
  'sort',
  'order',
  'page',
  'limit',
  'fields',
] as const;

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const JSON_TYPE = 'application/json; charset=utf-8';
const WWW_AUTHENTICATE = 'Basic realm="quotes", charset="UTF-8"';
const FIELDS = [
  'id',
  'author',
  'author_id',
  'work',
  'work_id',
  'category',
  'genre',
  'publish_date',
  'quote_length',
  'source',
  'quote',
  'language',
] as const;

// ---------------------------------------------------------------------------------------------
// The catalogue, as a data file holds it (genre may be a bare string; quote_length is computed).

interface Work {
  work: string;
  author: string;
  author_id: number;
  work_id: number;
  category: string;
  genre: string | string[];
  publish_date: string;
}
const work = (
  work: string,
  author: string,
  author_id: number,
  work_id: number,
  category: string,
  genre: string | string[],
  publish_date: string,
): Work => ({ work, author, author_id, work_id, category, genre, publish_date });

const W = {
  germinal: work('Germinal', 'Émile Zola', 7, 101, 'fiction', ['naturalism', 'Social Novel'], '1885'),
  assommoir: work("L'Assommoir", 'Émile Zola', 7, 102, 'fiction', 'naturalism', '1877-01'),
  pride: work('Pride and Prejudice', 'Jane Austen', 3, 1, 'fiction', ['Romance', 'satire'], '1813-01-28'),
  emma: work('Emma', 'Jane Austen', 3, 2, 'fiction', ['romance'], '1815-12-23'),
  wise: work('Wise Blood', "Flannery O'Connor", 12, 60, 'fiction', ['Southern Gothic', 'satire'], '1952'),
  good: work(
    'A Good Man Is Hard to Find',
    "Flannery O'Connor",
    12,
    61,
    'fiction',
    'southern  gothic',
    '1952-06',
  ),
  nausea: work('La Nausée', 'Jean-Paul Sartre', 5, 70, 'fiction', ['philosophical fiction'], '1938'),
  huis: work(
    'Huis clos',
    'Jean-Paul Sartre',
    5,
    71,
    'drama',
    ['drama', 'philosophical fiction'],
    '1944-05-27',
  ),
  either: work(
    'Enten–Eller',
    'Søren Kierkegaard',
    9,
    80,
    'Philosophy',
    ['philosophy', 'Existentialism'],
    '1843',
  ),
  genji: work('源氏物語', '紫式部', 21, 90, 'fiction', ['monogatari', 'romance'], '1008'),
  agnes: work('Agnes Grey', 'Anne  Brontë', 4, 50, 'fiction', ['  Realism  '], '1847-12'),
  poemsB: work('Poems', 'Anne  Brontë', 4, 51, 'POETRY', ['poetry'], '1846'),
  frank: work('Frankenstein', 'Mary Shelley', 2, 20, 'fiction', ['Gothic', 'science fiction'], '1818-01-01'),
  poemsS: work('Poems', 'Percy Bysshe Shelley', 30, 52, 'poetry', ['Poetry', 'romanticism'], '1846-05'),
  idearium: work('Idearium español', 'Ángel Ganivet', 44, 30, 'nonfiction', 'essay', '1897'),
  sin: work('The Sin-Eater', 'ﬁona Macleod', 45, 31, 'fiction', ['celtic revival', 'Folklore'], '1895'),
  alice: work(
    "Alice's Adventures in Wonderland",
    'Lewis Carroll',
    40,
    40,
    'fiction',
    ['fantasy', 'nonsense'],
    '1865-11-26',
  ),
  through: work('Through the Looking-Glass', 'Lewis Carroll', 40, 41, 'fiction', ['Fantasy'], '1871-12'),
  villes: work('Les Villes tentaculaires', 'Émile Verhaeren', 8, 42, 'poetry', ['symbolism'], '1895-01'),
  parody: work('Germinal', 'ZOLA Émile', 46, 103, 'fiction', ['parody'], '1885-03'),
  plus: work('Me + You', 'Ángel Ganivet', 44, 32, 'drama', ['comedy'], '1897-02-03'),
};

/** [work, id, quote] in file order: ids are sparse and shuffled. */
const ROWS: [keyof typeof W, number, string][] = [
  ['germinal', 907, 'Du pain! du pain!'],
  ['pride', 3, 'It is a truth universally acknowledged.'],
  ['frank', 58, 'Beware; for I am fearless, and therefore powerful. 😀'],
  ['genji', 1200, '世の中に絶えて桜のなかりせば'],
  ['wise', 12, 'Nobody with a good car needs to be justified.'],
  ['either', 5, 'Marry, and you will regret it; don’t marry, you will also regret it.'],
  ['huis', 77, "L'enfer, c'est les autres."],
  ['agnes', 31, 'All true histories contain instruction.'],
  ['alice', 600, 'Curiouser and curiouser!'],
  ['through', 2, 'Jam to-morrow and jam yesterday – but never jam to-day.'],
  ['poemsB', 44, 'Cold in the earth — and the deep snow piled above thee.'],
  ['poemsS', 45, 'I met a traveller from an antique land.'],
  ['emma', 46, 'One half of the world cannot understand the pleasures of the other.'],
  ['nausea', 19, 'Tout existant naît sans raison.'],
  ['assommoir', 300, 'Gervaise avait attendu Lantier jusqu’à deux heures du matin.'],
  ['good', 301, 'A good man is hard to find.'],
  ['idearium', 999, 'Noli foras ire.'],
  ['sin', 1000, 'e\u0301te\u0301 🌊🌊 sea'],
  ['villes', 150, 'La plaine est morne et morte.'],
  ['parody', 151, 'A parody of Germinal.'],
  ['pride', 4, 'I could easily forgive his pride.'],
  ['pride', 6, 'Vanity and pride are different things.'],
  ['frank', 59, 'Life, although it may only be an accumulation of anguish, is dear to me.'],
  ['frank', 60, 'Nothing is so painful to the human mind as a great and sudden change.'],
  ['germinal', 908, 'Des hommes poussaient, une armée noire.'],
  ['alice', 601, "We're all mad here."],
  ['alice', 602, "Who in the world am I? Ah, that's the great puzzle!"],
  ['wise', 302, 'Where you came from is gone.'],
  ['genji', 1201, '👍'],
  ['either', 20, 'Life can only be understood backwards.'],
  ['poemsS', 47, 'Look on my works, ye Mighty, and despair!'],
  ['poemsB', 48, 'Believe not those who say the upward path is smooth.'],
  ['emma', 7, 'Silly things do cease to be silly if they are done by sensible people.'],
  ['huis', 78, 'Donc, c’est ça l’enfer.'],
  ['sin', 1001, 'Abcdefghijklmnopqrstuvwxyz abc.'],
  ['villes', 152, 'Tous les chemins vont vers la ville.'],
  ['through', 303, 'Sentence first—verdict afterwards.'],
  ['assommoir', 888, 'Gervaise était lasse.'],
  ['idearium', 13, 'Noli foras ire, in interiore Hispaniae habitat veritas.'],
  ['nausea', 21, 'Je suis seul.'],
  ['plus', 1500, 'Tú + yo = dos.'],
];

/** The language of each quote not written in English, by id. */
const LANGUAGES: Record<number, string> = {
  907: 'fr',
  908: 'fr',
  1200: 'ja',
  1201: 'ja',
  77: 'fr',
  78: 'fr',
  19: 'fr',
  21: 'fr',
  300: 'fr',
  888: 'fr',
  999: 'la',
  13: 'la',
  1000: 'fr',
  150: 'fr',
  152: 'fr',
  1500: 'es',
};

const RECORDS = ROWS.map(([key, id, quote]) => ({
  id,
  ...W[key],
  source: `https://example.org/works/${W[key].work_id}`,
  quote,
  language: LANGUAGES[id] ?? 'en',
}));

interface Quote {
  id: number;
  author: string;
  author_id: number;
  work: string;
  work_id: number;
  category: string;
  genre: string[];
  publish_date: string;
  quote_length: number;
  source: string;
  quote: string;
  language: string;
}

/** What the service must answer for each record: docs/api.md#the-quote, in its field order. */
const QUOTES: Quote[] = RECORDS.map((r) => ({
  id: r.id,
  author: r.author,
  author_id: r.author_id,
  work: r.work,
  work_id: r.work_id,
  category: r.category,
  genre: typeof r.genre === 'string' ? [r.genre] : r.genre,
  publish_date: r.publish_date,
  quote_length: Array.from(r.quote).length,
  source: r.source,
  quote: r.quote,
  language: r.language,
}));

// ---------------------------------------------------------------------------------------------
// The oracle: docs/api.md#listing-quotes in a few lines, from the contract's own words.

const folded = (s: string) =>
  s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/gu, ' ').trim();
const wordsOf = (s: string) => folded(s).match(/[\p{L}\p{N}]+/gu) ?? [];
/** Every word of `value` begins some word of `text`. */
const likes = (text: string, value: string) =>
  wordsOf(value).every((w) => wordsOf(text).some((own) => own.startsWith(w)));

function byCodePoint(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) as number);
  const y = Array.from(b, (c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i] as number) - (y[i] as number);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

type Key = [field: string, direction: 'asc' | 'desc'];
function sortKey(q: Quote, field: string): string | number {
  if (field === 'genre') return folded(q.genre[0] as string);
  const value = q[field as keyof Quote] as string | number;
  return typeof value === 'string' && field !== 'publish_date' ? folded(value) : value;
}
function ordered(quotes: Quote[], keys: Key[]): Quote[] {
  return [...quotes].sort((a, b) => {
    for (const [field, direction] of keys) {
      const x = sortKey(a, field);
      const y = sortKey(b, field);
      const c = typeof x === 'number' ? x - (y as number) : byCodePoint(x, y as string);
      if (c !== 0) return direction === 'asc' ? c : -c;
    }
    return a.id - b.id;
  });
}
/** The quotes passing `test`, in the default order (id ascending). */
const where = (test: (q: Quote) => boolean) => ordered(QUOTES.filter(test), []);
const idsOf = (quotes: readonly { id?: number }[]) => quotes.map((q) => q.id);

// ---------------------------------------------------------------------------------------------
// Apps and helpers.

const BYPASS = { 'x-bypass-auth': 'true' };
const basic = (credentials: string) => `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;
const ALICE = { authorization: basic('alice:s3cret') };
const USERS = 'alice:s3cret,bob:pa:ss';

/**
 * An engine the contract runs on: where the indexer builds a catalogue, and where the service
 * reads it, as the variables both take.
 */
export interface ContractBackend {
  /** `sqlite`, `meilisearch`. */
  name: string;
  /** Why the suite cannot run here: it is then registered as skipped. */
  skip?: string;
  /** Prepares the engine (once, before the suite); `dir` is the suite's own temporary directory. */
  start(dir: string): Promise<void>;
  /** The variables that make the indexer build, and the service serve, the catalogue `name`. */
  env(name: string): Record<string, string>;
  /** Releases what `start` prepared. */
  stop(): Promise<void>;
}

let dir: string;
/** The variables that serve the audit catalogue. */
let catalogueEnv: Record<string, string>;
let app: FastifyInstance;
let origin: string;
const others: FastifyInstance[] = [];

/** An app over the audit catalogue, configured from `env` as the server would be. */
async function appWith(env: Record<string, string>, deps: Parameters<typeof buildApp>[1] = {}) {
  const built = await buildApp(
    loadConfig({
      ...catalogueEnv,
      LOG_LEVEL: 'silent',
      AUTH_USERS: USERS,
      RATE_LIMIT_MAX: '1000000',
      ...env,
    }),
    deps,
  );
  others.push(built);
  return built;
}

/**
 * Registers the contract suite on one backend: the same requests and expectations on every
 * engine, so that the two prove the same rules (and report the same counts).
 */
export function describeContract(backend: ContractBackend): void {
  if (backend.skip !== undefined) {
    describe.skip(`API contract on ${backend.name} (skipped: ${backend.skip})`, () => {
      it('needs the engine', () => {});
    });
    return;
  }
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quotes-contract-'));
    await backend.start(dir);
    catalogueEnv = backend.env('audit');
    const file = join(dir, 'audit.json');
    writeFileSync(file, JSON.stringify(RECORDS));
    await indexFile(file, loadConfig({ ...catalogueEnv, LOG_LEVEL: 'silent' }));
    app = await appWith({});
    origin = await app.listen({ host: '127.0.0.1', port: 0 });
  });

  afterAll(async () => {
    await Promise.all(others.map((a) => a.close()));
    await backend.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const send = (url: string, options: Omit<InjectOptions, 'url'> = {}, target = app) =>
    target.inject({ method: 'GET', ...options, url, headers: { ...BYPASS, ...options.headers } });
  const anonymous = (url: string, options: Omit<InjectOptions, 'url'> = {}, target = app) =>
    target.inject({ method: 'GET', ...options, url });

  /** The Error object of a response, after checking its exact shape, status and content-type. */
  function errorOf(response: LightMyRequestResponse, status: number, error?: string) {
    expect(response.statusCode, response.body).toBe(status);
    expect(response.headers['content-type']).toBe(JSON_TYPE);
    const body = response.json() as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['code', 'details', 'error']);
    expect(body.code).toBe(status);
    if (error !== undefined) expect(body.error).toBe(error);
    expect(typeof body.details).toBe('string');
    expect(body.details).not.toMatch(/\n\s+at |statusCode|FST_/);
    return body as { code: number; error: string; details: string };
  }

  interface Page {
    items: Partial<Quote>[];
    pagination: { page: number; limit: number; total_pages: number; total_quotes: number };
  }
  async function page(query: string): Promise<Page> {
    const response = await send(`/quotes?${query}`);
    expect(response.statusCode, `${query}: ${response.body}`).toBe(200);
    return response.json() as Page;
  }
  /** Ids of a list request, with limit=100 unless the query sets it. */
  const listIds = async (query: string) =>
    idsOf((await page(query.includes('limit=') ? query : `${query}&limit=100`)).items);

  /** One HTTP/1.1 request written as is, for what a client library would refuse to send. */
  function rawRequest(head: string, body = ''): Promise<{ status: number; headers: string; body: string }> {
    const { hostname, port } = new URL(origin);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => {
        socket.end(`${head}\r\nHost: test\r\nConnection: close\r\n\r\n${body}`);
      });
      const chunks: Buffer[] = [];
      let failure: Error | undefined;
      socket.on('data', (chunk) => chunks.push(chunk));
      // The server may close while an oversized request is still being written: a reset after the
      // answer arrived is not a failure.
      socket.on('error', (error) => {
        failure = error;
      });
      socket.on('close', () => {
        if (chunks.length === 0) return reject(failure ?? new Error('no answer'));
        const text = Buffer.concat(chunks).toString('utf8');
        const split = text.indexOf('\r\n\r\n');
        resolve({
          status: Number(text.slice(9, 12)),
          headers: text.slice(0, split).toLowerCase(),
          body: text.slice(split + 4),
        });
      });
    });
  }

  // ---------------------------------------------------------------------------------------------

  describe('paths (docs/api.md#paths)', () => {
    const OK_PATHS = [
      '/quotes',
      '/quotes/random',
      '/quotes/1200',
      '/api/v1/quotes?genre=romance',
      '/health',
      '/ready',
    ];

    it('serves every path of the table as JSON', async () => {
      for (const path of OK_PATHS) {
        const response = await send(path);
        expect(response.statusCode, path).toBe(200);
        expect(response.headers['content-type'], path).toBe(JSON_TYPE);
      }
      expect((await anonymous('/health')).json()).toEqual({ status: 'ok' });
      expect((await anonymous('/ready')).json()).toEqual({ status: 'ready' });
    });

    it('answers HEAD wherever GET answers, with the same status and headers and no body', async () => {
      const paths = [...OK_PATHS, '/quotes/4444', '/quotes?limit=0', '/quotes/1/extra', '/nope'];
      for (const path of paths) {
        for (const headers of [BYPASS, {}]) {
          const get = await anonymous(path, { headers });
          const head = await anonymous(path, { method: 'HEAD', headers });
          expect(head.statusCode, path).toBe(get.statusCode);
          expect(head.body, path).toBe('');
          for (const name of [
            'content-type',
            'etag',
            'cache-control',
            'www-authenticate',
            'content-length',
          ]) {
            // A random quote's length is the length of another quote.
            if (name === 'content-length' && path === '/quotes/random') continue;
            expect(head.headers[name], `${path} ${name}`).toBe(get.headers[name]);
          }
        }
      }
    });

    it('answers 405 with Allow: GET, HEAD to any other method on every known path', async () => {
      const known = [
        '/quotes',
        '/quotes/random',
        '/quotes/123',
        '/quotes/abc',
        '/api/v1/quotes',
        '/health',
        '/ready',
      ];
      for (const url of known) {
        for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const) {
          for (const headers of [{}, BYPASS]) {
            const response = await app.inject({ method, url, headers });
            errorOf(response, 405, 'method_not_allowed');
            expect(response.headers.allow, `${method} ${url}`).toBe('GET, HEAD');
          }
        }
      }
      // A body the method would carry changes nothing, malformed or not.
      const withBody = await app.inject({
        method: 'POST',
        url: '/quotes',
        headers: { 'content-type': 'application/json' },
        payload: '{not json',
      });
      errorOf(withBody, 405, 'method_not_allowed');
    });

    it('answers 404 not_found to unknown paths, trailing slashes included, whatever the method', async () => {
      const unknown = [
        '/nope',
        '/',
        '/quotes/1/extra',
        '/quotes/random/x',
        '/quotes/',
        '/quotes//3',
        '/health/',
        '/ready/',
        '/api/v1/quotes/',
        '/api/v1',
        '/QUOTES',
      ];
      for (const url of unknown) {
        errorOf(await anonymous(url), 404, 'not_found');
        errorOf(await send(url), 404, 'not_found');
        errorOf(await app.inject({ method: 'POST', url }), 404, 'not_found');
      }
    });
  });

  describe('errors (docs/api.md#errors)', () => {
    it('checks the rate limit, then credentials, then parameters, then data', async () => {
      // A bad parameter without credentials: 401, not 400.
      for (const url of [
        '/quotes?limit=ten',
        '/quotes?foo=1',
        '/quotes/0',
        '/quotes/random?sort=id',
        '/api/v1/quotes',
      ]) {
        const response = await anonymous(url);
        errorOf(response, 401, 'unauthorized');
        expect(response.headers['www-authenticate']).toBe(WWW_AUTHENTICATE);
      }
      // A bad parameter with credentials, on a request that would match nothing: 400, not 404.
      errorOf(await send('/quotes?author=nobody&limit=0'), 400, 'bad_request');
      errorOf(await send('/quotes/4444?fields=nope'), 400, 'bad_request');
      errorOf(await send('/quotes/random?author=nobody&page=1'), 400, 'bad_request');
      errorOf(await send('/api/v1/quotes?genre=nothing&limit=0'), 400, 'bad_request');
      // Valid and unmatched: 404.
      errorOf(await send('/quotes?author=nobody'), 404, 'not_found');
    });

    it('details name the parameter and what it accepts', async () => {
      expect(errorOf(await send('/quotes?limit=ten'), 400).details).toBe(
        "limit must be an integer from 1 to 100, got 'ten'",
      );
      const unknown = errorOf(await send('/quotes?colour=red'), 400).details;
      expect(unknown).toMatch(/'colour'/);
      for (const name of LIST_PARAMETERS) {
        expect(unknown).toContain(name);
      }
      expect(errorOf(await send('/quotes?sort=title'), 400).details).toMatch(/title.*author.*publish_date/);
      expect(errorOf(await send('/api/v1/quotes?genre=x&sort=up'), 400).details).toMatch(/sort.*asc.*desc/);
    });
  });

  describe('the Quote (docs/api.md#the-quote)', () => {
    it('serves every record with every field, typed, never null, genre always an array', async () => {
      const all = await page('limit=100');
      expect(all.pagination.total_quotes).toBe(QUOTES.length);
      for (const item of all.items) {
        const expected = QUOTES.find((q) => q.id === item.id);
        // Exactly these keys, in this order, with these values (quote_length in code points).
        expect(JSON.stringify(item)).toBe(JSON.stringify(expected));
      }
      const byId = (id: number) => QUOTES.find((q) => q.id === id) as Quote;
      expect(byId(1000).quote_length).toBe(12); // two combining accents and two emoji
      expect(byId(1201).quote_length).toBe(1);
      expect((await send('/quotes/300')).json().genre).toEqual(['naturalism']); // a bare string in the file
      expect((await send('/quotes/301')).json().genre).toEqual(['southern  gothic']);
    });
  });

  describe('listing quotes (docs/api.md#listing-quotes)', () => {
    it('defaults to page 1 of 5 quotes by id ascending', async () => {
      const body = await page('');
      expect(idsOf(body.items)).toEqual(idsOf(ordered(QUOTES, [])).slice(0, 5));
      expect(body.pagination).toEqual({
        page: 1,
        limit: 5,
        total_pages: Math.ceil(QUOTES.length / 5),
        total_quotes: QUOTES.length,
      });
    });

    it('compares text filters in folded form: case, accents and white space', async () => {
      const zola = idsOf(where((q) => q.author === 'Émile Zola'));
      expect(zola).toHaveLength(4);
      for (const value of [
        '%20%20%C3%89mile%20%20%20ZOLA%20',
        '++%C3%A9mile+zola',
        'emile+zola',
        'EMILE%09ZOLA',
      ]) {
        expect(await listIds(`author=${value}`), value).toEqual(zola);
      }
      const anne = idsOf(where((q) => q.author === 'Anne  Brontë'));
      expect(await listIds('author=anne+bronte')).toEqual(anne);
      expect(await listIds('author=s%C3%B8ren+KIERKEGAARD')).toEqual(idsOf(where((q) => q.author_id === 9)));
      errorOf(await send('/quotes?author=soren+kierkegaard'), 404, 'not_found'); // ø has no decomposition
      expect(await listIds('author=fiona+macleod')).toEqual(idsOf(where((q) => q.author_id === 45))); // ﬁ ligature
      expect(await listIds('author=%E7%B4%AB%E5%BC%8F%E9%83%A8')).toEqual([1200, 1201]);
      expect(await listIds("author=flannery+o'connor")).toEqual(idsOf(where((q) => q.author_id === 12)));
      errorOf(await send('/quotes?author=flannery+oconnor'), 404, 'not_found');
      errorOf(await send('/quotes?author=jean+paul+sartre'), 404, 'not_found');
      expect(await listIds('author=Jean-Paul%20Sartre')).toEqual(idsOf(where((q) => q.author_id === 5)));
    });

    it('decodes + and %20 to a space and %2B to a literal plus', async () => {
      const plus = idsOf(where((q) => q.work === 'Me + You'));
      expect(plus).toEqual([1500]);
      expect(await listIds('work=me+%2B+you')).toEqual(plus);
      expect(await listIds('work=ME%20%2B%20YOU')).toEqual(plus);
      errorOf(await send('/quotes?work=me+++you'), 404, 'not_found');
    });

    it('matches category and genre by folded equality, genre on any element', async () => {
      expect(await listIds('category=poetry')).toEqual(
        idsOf(where((q) => q.category.toLowerCase() === 'poetry')),
      );
      expect(await listIds('genre=realism')).toEqual([31]);
      expect(await listIds('genre=SOUTHERN+GOTHIC')).toEqual(
        idsOf(where((q) => q.work_id === 60 || q.work_id === 61)),
      );
      expect(await listIds('genre=satire')).toEqual(idsOf(where((q) => q.genre.includes('satire'))));
      expect(await listIds('genre=romance')).toEqual(
        idsOf(where((q) => q.genre.some((g) => g.toLowerCase() === 'romance'))),
      );
    });

    it('ORs repeated values of one filter and ANDs different filters', async () => {
      expect(await listIds('author_id=7&author_id=3')).toEqual(
        idsOf(where((q) => q.author_id === 7 || q.author_id === 3)),
      );
      expect(await listIds('work=poems')).toEqual(idsOf(where((q) => q.work === 'Poems')));
      expect(await listIds('work=poems&author=anne+bronte')).toEqual([44, 48]);
      expect(await listIds('genre=romance&genre=gothic&category=fiction&author_like=shel')).toEqual(
        idsOf(where((q) => q.author === 'Mary Shelley')),
      );
      expect(await listIds('work_id=51&work_id=52&work_id=51')).toEqual(
        idsOf(where((q) => q.work === 'Poems')),
      );
    });

    it('author_like and work_like: every word begins a word, in any order', async () => {
      const cases: [string, (q: Quote) => boolean][] = [
        ['author_like=aust', (q) => q.author === 'Jane Austen'],
        ['author_like=jane+aus', (q) => q.author === 'Jane Austen'],
        ['author_like=aus+JANE', (q) => q.author === 'Jane Austen'],
        ['author_like=emi', (q) => q.author_id === 7 || q.author_id === 8 || q.author_id === 46],
        ['author_like=%C3%89MI+zo', (q) => q.author_id === 7 || q.author_id === 46],
        ["author_like=O'Conn", (q) => q.author_id === 12],
        ['author_like=conn', (q) => q.author_id === 12],
        ['author_like=jean-pa', (q) => q.author_id === 5],
        ['author_like=fio', (q) => q.author_id === 45],
        ['author_like=s%C3%B8r', (q) => q.author_id === 9],
        ['author_like=%E7%B4%AB', (q) => q.author_id === 21],
        ['author_like=shel&author_like=aust', (q) => /Shelley|Austen/.test(q.author)],
        ['work_like=pride+prej', (q) => q.work === 'Pride and Prejudice'],
        ['work_like=glass+look', (q) => q.work_id === 41],
        ['work_like=alice', (q) => q.work_id === 40],
        ['work_like=enten+ell', (q) => q.work_id === 80],
        ['work_like=nau', (q) => q.work_id === 70],
        ['author_like=aust&work_like=em', (q) => q.work === 'Emma'],
      ];
      for (const [query, test] of cases) {
        const expected = idsOf(where(test));
        expect(expected.length, query).toBeGreaterThan(0);
        expect(await listIds(query), query).toEqual(expected);
      }
      // The oracle agrees with the hand-written predicates above.
      expect(idsOf(where((q) => likes(q.author, "O'Conn")))).toEqual(idsOf(where((q) => q.author_id === 12)));
      for (const query of ['author_like=usten', 'author_like=oconn', 'author_like=sor', 'work_like=alices']) {
        errorOf(await send(`/quotes?${query}`), 404, 'not_found');
      }
      for (const value of ['---', "'", '+', '%E2%80%94']) {
        expect(errorOf(await send(`/quotes?author_like=${value}`), 400).details).toMatch(/^author_like /);
        expect(errorOf(await send(`/quotes?work_like=${value}`), 400).details).toMatch(/^work_like /);
      }
    });

    it('validates ids, counts and lengths of filter values, and the length of every other value', async () => {
      for (const value of ['0', '-1', '1.5', 'abc', '07', '1e2']) {
        errorOf(await send(`/quotes?author_id=${value}`), 400, 'bad_request');
        errorOf(await send(`/quotes?work_id=${value}`), 400, 'bad_request');
      }
      const values = (n: number, value: (i: number) => string) =>
        Array.from({ length: n }, (_, i) => `author=${value(i)}`).join('&');
      errorOf(await send(`/quotes?${values(20, (i) => `nobody${i}`)}`), 404, 'not_found');
      expect(await listIds(values(20, () => 'jane+austen'))).toEqual(idsOf(where((q) => q.author_id === 3)));
      errorOf(await send(`/quotes?${values(21, (i) => `nobody${i}`)}`), 400, 'bad_request');
      errorOf(
        await send(`/quotes?genre=a&${Array.from({ length: 21 }, () => 'genre=romance').join('&')}`),
        400,
      );
      errorOf(await send(`/quotes?author=${'a'.repeat(200)}`), 404, 'not_found');
      errorOf(await send(`/quotes?author=${encodeURIComponent('é'.repeat(200))}`), 404, 'not_found');
      errorOf(await send(`/quotes?author=${'a'.repeat(201)}`), 400, 'bad_request');
      errorOf(await send(`/quotes?work_like=${'a'.repeat(201)}`), 400, 'bad_request');
      // The bound holds for every parameter's value, not only for filters.
      errorOf(await send(`/quotes?page=${'9'.repeat(200)}`), 404, 'not_found');
      errorOf(await send(`/quotes?page=${'9'.repeat(201)}`), 400, 'bad_request');
      errorOf(await send(`/quotes?fields=${'id,'.repeat(67)}id`), 400, 'bad_request');
      errorOf(await send(`/quotes/1?fields=${'id,'.repeat(67)}id`), 400, 'bad_request');
    });

    it('rejects empty values, unknown names and repeated single-valued parameters', async () => {
      for (const name of LIST_PARAMETERS) {
        expect(errorOf(await send(`/quotes?${name}=`), 400, 'bad_request').details, name).toContain(name);
        errorOf(await send(`/quotes?${name}`), 400, 'bad_request');
      }
      errorOf(await send('/quotes?author=+++'), 400, 'bad_request');
      for (const name of ['page', 'limit', 'fields']) {
        const value = name === 'fields' ? 'id' : '1';
        expect(errorOf(await send(`/quotes?${name}=${value}&${name}=${value}`), 400).details).toMatch(
          new RegExp(`^${name} `),
        );
      }
      for (const name of ['Author', 'LIMIT', 'search', 'offset', 'orderby']) {
        expect(errorOf(await send(`/quotes?${name}=1`), 400).details).toContain(name);
      }
    });

    it('sorts by every key, folded text by code point, genre by its first element, then by id', async () => {
      const keys = [
        'id',
        'author',
        'author_id',
        'work',
        'work_id',
        'category',
        'genre',
        'publish_date',
        'quote_length',
      ];
      for (const key of keys) {
        expect(await listIds(`sort=${key}`), key).toEqual(idsOf(ordered(QUOTES, [[key, 'asc']])));
        for (const order of ['desc', 'DESC', 'Desc']) {
          expect(await listIds(`sort=${key}&order=${order}`), key).toEqual(
            idsOf(ordered(QUOTES, [[key, 'desc']])),
          );
        }
      }
      // Spot checks that the oracle itself reads the contract right.
      const byDate = ordered(
        where((q) => q.publish_date.startsWith('1846')),
        [['publish_date', 'asc']],
      );
      expect(byDate.map((q) => q.publish_date)).toEqual(['1846', '1846', '1846-05', '1846-05']);
      expect(ordered(QUOTES, [['author', 'asc']])[0]?.author).toBe('Ángel Ganivet');
      expect(ordered(QUOTES, [['author', 'desc']])[0]?.author).toBe('紫式部');
    });

    it('sorts by several keys, comma-separated or repeated, with one order or one per key', async () => {
      const cases: [string, Key[]][] = [
        [
          'sort=author,publish_date',
          [
            ['author', 'asc'],
            ['publish_date', 'asc'],
          ],
        ],
        [
          'sort=author&sort=publish_date',
          [
            ['author', 'asc'],
            ['publish_date', 'asc'],
          ],
        ],
        [
          'sort=publish_date&sort=author',
          [
            ['publish_date', 'asc'],
            ['author', 'asc'],
          ],
        ],
        [
          'sort=category,work&order=desc',
          [
            ['category', 'desc'],
            ['work', 'desc'],
          ],
        ],
        [
          'sort=category,work&order=desc,asc',
          [
            ['category', 'desc'],
            ['work', 'asc'],
          ],
        ],
        [
          'sort=category&sort=work&order=ASC&order=desc',
          [
            ['category', 'asc'],
            ['work', 'desc'],
          ],
        ],
        [
          'sort=genre,quote_length&order=asc,desc',
          [
            ['genre', 'asc'],
            ['quote_length', 'desc'],
          ],
        ],
        [
          'sort=work,id&order=asc,desc',
          [
            ['work', 'asc'],
            ['id', 'desc'],
          ],
        ],
        ['order=desc', [['id', 'desc']]],
      ];
      for (const [query, keys] of cases) {
        expect(await listIds(query), query).toEqual(idsOf(ordered(QUOTES, keys)));
      }
      for (const query of [
        'sort=author,work&order=asc,desc,asc',
        'sort=author&order=asc,desc',
        'order=asc,desc',
        'order=up',
        'sort=quote',
        'sort=source',
        'sort=author,',
        'sort=Author',
      ]) {
        errorOf(await send(`/quotes?${query}`), 400, 'bad_request');
      }
    });

    it('pages: limit 1 to 100, page ≥ 1, total_pages = ceil, no overlap, 404 past the last naming it', async () => {
      for (const limit of [1, 3, 7, 41, 100]) {
        const pages = Math.ceil(QUOTES.length / limit);
        const seen: (number | undefined)[] = [];
        for (let n = 1; n <= pages; n++) {
          const body = await page(`sort=author&limit=${limit}&page=${n}`);
          expect(body.pagination).toEqual({
            page: n,
            limit,
            total_pages: pages,
            total_quotes: QUOTES.length,
          });
          seen.push(...idsOf(body.items));
        }
        expect(seen).toEqual(idsOf(ordered(QUOTES, [['author', 'asc']])));
        const past = errorOf(await send(`/quotes?limit=${limit}&page=${pages + 1}`), 404, 'not_found');
        expect(past.details).toMatch(new RegExp(`last page is ${pages}\\b`));
      }
      expect(errorOf(await send('/quotes?author=jane+austen&limit=2&page=4'), 404).details).toMatch(
        /last page is 3\b/,
      );
      // No upper bound on page: a huge one is past the last page, not a bad parameter.
      expect(errorOf(await send('/quotes?page=99999999999999999999'), 404).details).toMatch(
        /last page is 9\b/,
      );
      for (const limit of ['0', '101', 'ten', '1.5', '%2B1', '-1', '1e1', '']) {
        errorOf(await send(`/quotes?limit=${limit}`), 400, 'bad_request');
      }
      for (const n of ['0', '-1', 'abc', '1.0', ''])
        errorOf(await send(`/quotes?page=${n}`), 400, 'bad_request');
    });

    it('fields: exactly the requested keys in Quote order, duplicates ignored, unknown names a 400', async () => {
      const cases: [string, string[]][] = [
        ['id', ['id']],
        ['quote,id', ['id', 'quote']],
        ['genre,id,genre,author', ['id', 'author', 'genre']],
        [[...FIELDS].reverse().join(','), [...FIELDS]],
      ];
      for (const [fields, keys] of cases) {
        for (const item of (await page(`fields=${fields}&limit=100`)).items) {
          expect(Object.keys(item), fields).toEqual(keys);
        }
        expect(Object.keys((await send(`/quotes/1200?fields=${fields}`)).json())).toEqual(keys);
        expect(Object.keys((await send(`/quotes/random?fields=${fields}`)).json())).toEqual(keys);
      }
      for (const fields of ['nope', 'id,nope', 'ID', 'id,,quote']) {
        errorOf(await send(`/quotes?fields=${fields}`), 400, 'bad_request');
      }
    });
  });

  describe('one quote, and a random one (docs/api.md#one-quote-and-a-random-one)', () => {
    it('/quotes/{id}: an integer ≥ 1 (else 400), 404 when unknown, fields only', async () => {
      expect((await send('/quotes/1500')).json()).toEqual(QUOTES.find((q) => q.id === 1500));
      for (const id of ['0', '-1', '1.0', 'abc', '1e3', '%201', '+1', '0x10']) {
        expect(errorOf(await send(`/quotes/${id}`), 400, 'bad_request').details).toMatch(/^id /);
      }
      for (const id of ['1', '14', '99999', '99999999999999999999']) {
        errorOf(await send(`/quotes/${id}`), 404, 'not_found');
      }
      for (const query of [
        'author=x',
        'sort=id',
        'limit=1',
        'page=1',
        'order=asc',
        'fields=id&fields=id',
        'fields=',
      ]) {
        errorOf(await send(`/quotes/3?${query}`), 400, 'bad_request');
      }
    });

    it('/quotes/random: uniform among the matching quotes, not cached, 404 when none', async () => {
      const pool = where((q) => likes(q.author, 'emi')).map((q) => q.id);
      expect(pool).toHaveLength(7);
      const counts = new Map<number, number>();
      const draws = 700;
      for (let i = 0; i < draws; i++) {
        const response = await send('/quotes/random?author_like=emi&fields=id');
        expect(response.headers['cache-control']).toBe('no-store');
        expect(response.headers.etag).toBeUndefined();
        const { id } = response.json() as { id: number };
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      expect([...counts.keys()].sort((a, b) => a - b)).toEqual([...pool].sort((a, b) => a - b));
      // Chi-squared with 6 degrees of freedom: above 27.86 has probability 0.0001 when uniform.
      const e = draws / pool.length;
      const chi2 = [...counts.values()].reduce((sum, c) => sum + (c - e) ** 2 / e, 0);
      expect(chi2).toBeLessThan(27.86);

      const full = (await send('/quotes/random?author_id=21&genre=ROMANCE')).json() as Quote;
      expect(QUOTES.filter((q) => q.author_id === 21)).toContainEqual(full);
      errorOf(await send('/quotes/random?author=nobody'), 404, 'not_found');
      for (const query of ['sort=id', 'order=asc', 'page=1', 'limit=1', 'foo=1', 'author=', 'fields=nope']) {
        errorOf(await send(`/quotes/random?${query}`), 400, 'bad_request');
      }
    });
  });

  describe('language and random without repeats', () => {
    it('language: every quote has one; the filter folds case, ORs repeated values, and is a facet', async () => {
      for (const item of (await page('limit=100')).items) expect(item.language).toMatch(/^[a-z]{2}$/);
      expect(idsOf((await page('language=fr&limit=100')).items)).toEqual(
        idsOf(where((q) => q.language === 'fr')),
      );
      expect(idsOf((await page('language=LA&language=es&limit=100')).items)).toEqual(
        idsOf(where((q) => q.language === 'la' || q.language === 'es')),
      );
      expect(idsOf((await page('language=fr&author_like=zola&limit=100')).items)).toEqual(
        idsOf(where((q) => q.language === 'fr' && likes(q.author, 'zola'))),
      );
      errorOf(await send('/quotes?language=de'), 404, 'not_found');
      for (const value of ['xx', 'fra', 'french', 'f', '']) {
        const { details } = errorOf(await send(`/quotes?language=${value}`), 400, 'bad_request');
        expect(details).toMatch(/^language must/);
      }
      const facets = (await send('/quotes/facets?facet=language')).json() as {
        facets: { language: { value: string; count: number }[] };
      };
      const counts = new Map<string, number>();
      for (const q of QUOTES) counts.set(q.language, (counts.get(q.language) ?? 0) + 1);
      expect(facets.facets.language).toEqual(
        [...counts]
          .map(([value, count]) => ({ value, count }))
          .sort((a, b) => b.count - a.count || byCodePoint(a.value, b.value)),
      );
      expect((await send('/quotes/random?language=ja&fields=id')).json()).toHaveProperty('id');
    });

    it('exclude: never an excluded id, 404 when every match is excluded, 400 for a bad list', async () => {
      const pool = idsOf(where((q) => likes(q.author, 'emi')));
      const excluded = pool.slice(0, 4);
      const seen = new Set<number>();
      for (let i = 0; i < 150; i++) {
        const response = await send(`/quotes/random?author_like=emi&exclude=${excluded.join(',')}&fields=id`);
        expect(response.statusCode).toBe(200);
        expect(response.headers['cache-control']).toBe('no-store');
        seen.add((response.json() as { id: number }).id);
      }
      expect([...seen].sort((a, b) => a - b)).toEqual(pool.slice(4).sort((a, b) => (a ?? 0) - (b ?? 0)));
      const several = (
        await send(`/quotes/random?author_like=emi&count=10&exclude=${excluded.join(',')}`)
      ).json();
      expect(idsOf(several as Quote[]).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(
        pool.slice(4).sort((a, b) => (a ?? 0) - (b ?? 0)),
      );
      errorOf(await send(`/quotes/random?author_like=emi&exclude=${pool.join(',')}`), 404, 'not_found');
      errorOf(
        await send(`/quotes/random?author_like=emi&count=3&exclude=${pool.join(',')}`),
        404,
        'not_found',
      );
      const hundred = Array.from({ length: 100 }, (_, i) => 100_000 + i).join(',');
      expect((await send(`/quotes/random?exclude=${hundred}`)).statusCode).toBe(200);
      for (const value of ['', '0', '1,,2', 'a', '-3', `${hundred},7`]) {
        const { details } = errorOf(await send(`/quotes/random?exclude=${value}`), 400, 'bad_request');
        expect(details).toMatch(/^exclude /);
      }
      errorOf(await send('/quotes/random?exclude=1&exclude=2'), 400, 'bad_request');
      errorOf(await send('/quotes?exclude=1'), 400, 'bad_request');
    });
  });

  describe('the genre form (docs/api.md#the-genre-form)', () => {
    const V1_KEYS = ['id', 'author', 'work', 'genre', 'publish_date', 'quote_length', 'source', 'quote'];
    const GENRES = ['romance', 'gothic', 'satire', 'naturalism', 'fantasy'];
    const matching = where((q) => q.genre.some((g) => GENRES.includes(folded(g))));

    it('filters by genre, 10 per page by author ascending then id, items of exactly eight fields', async () => {
      const response = await send(
        `/api/v1/quotes?${GENRES.map((g) => `genre=${g.toUpperCase()}`).join('&')}`,
      );
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(Object.keys(body)).toEqual(['status_code', 'data', 'pagination']);
      expect(body.status_code).toBe(200);
      const expected = ordered(matching, [['author', 'asc']]).slice(0, 10);
      expect(body.data).toEqual(
        expected.map((q) => Object.fromEntries(V1_KEYS.map((k) => [k, q[k as keyof Quote]]))),
      );
      for (const item of body.data) expect(Object.keys(item)).toEqual(V1_KEYS);
      expect(body.pagination).toEqual({
        page: 1,
        limit: 10,
        total_pages: Math.ceil(matching.length / 10),
        total_quotes: matching.length,
      });
    });

    it('orderby and sort (the direction), pages', async () => {
      const genres = GENRES.map((g) => `genre=${g}`).join('&');
      for (const orderby of ['author', 'work', 'genre', 'publish_date', 'quote_length']) {
        for (const sort of ['asc', 'desc']) {
          const body = (
            await send(`/api/v1/quotes?${genres}&orderby=${orderby}&sort=${sort}&limit=100`)
          ).json();
          expect(idsOf(body.data), `${orderby} ${sort}`).toEqual(
            idsOf(ordered(matching, [[orderby, sort as 'asc' | 'desc']])),
          );
        }
      }
      const second = (await send(`/api/v1/quotes?${genres}&limit=3&page=2`)).json();
      expect(idsOf(second.data)).toEqual(idsOf(ordered(matching, [['author', 'asc']]).slice(3, 6)));
      expect(second.pagination).toEqual({
        page: 2,
        limit: 3,
        total_pages: Math.ceil(matching.length / 3),
        total_quotes: matching.length,
      });
    });

    it('answers 400 for a missing genre or any other parameter, 404 for no match or a page past the last', async () => {
      for (const query of [
        '',
        'genre=',
        'genre=+',
        'genre=romance&foo=1',
        'genre=romance&order=asc',
        'genre=romance&fields=id',
        'genre=romance&author=x',
        'genre=romance&orderby=id',
        'genre=romance&orderby=category',
        'genre=romance&sort=author',
        'genre=romance&sort=up',
        'genre=romance&limit=0',
        'genre=romance&limit=101',
        'genre=romance&page=0',
        'genre=romance&page=1&page=1',
        'genre=romance&sort=asc&sort=asc',
      ]) {
        errorOf(await send(`/api/v1/quotes?${query}`), 400, 'bad_request');
      }
      errorOf(await send('/api/v1/quotes?genre=nothing'), 404, 'not_found');
      expect(errorOf(await send('/api/v1/quotes?genre=romance&page=2'), 404, 'not_found').details).toMatch(
        /last page is 1\b/,
      );
    });
  });

  describe('authentication (docs/api.md#authentication)', () => {
    const url = '/quotes?limit=1&fields=id';
    const asked = (headers: Record<string, string>, target = app) => anonymous(url, { headers }, target);

    it('answers each kind of credential as the contract says', async () => {
      const cases: [Record<string, string>, number, string?][] = [
        [{}, 401, 'unauthorized'],
        [{ authorization: '' }, 401, 'unauthorized'],
        [{ authorization: 'Bearer x' }, 401, 'unauthorized'],
        [{ authorization: 'Basic' }, 401, 'invalid_credentials'],
        [{ authorization: 'Basic !!!' }, 401, 'invalid_credentials'],
        [{ authorization: basic('alice') }, 401, 'invalid_credentials'],
        [{ authorization: basic('carol:s3cret') }, 401, 'unauthorized'],
        [{ authorization: basic('alice:wrong') }, 401, 'unauthorized'],
        [{ authorization: basic('dev:dev') }, 401, 'unauthorized'], // users are configured: no dev user
        [ALICE, 200],
        [{ authorization: basic('bob:pa:ss') }, 200], // the password holds a colon
        [{ authorization: `basic ${basic('alice:s3cret').slice(6)}` }, 200],
        [{ 'x-bypass-auth': 'true' }, 200],
        [{ 'x-bypass-auth': 'TRUE' }, 200],
        [{ 'x-bypass-auth': 'True' }, 200],
        [{ 'x-bypass-auth': 'false' }, 401, 'unauthorized'],
        [{ 'x-bypass-auth': 'yes' }, 401, 'unauthorized'],
        [{ 'x-bypass-auth': '1' }, 401, 'unauthorized'],
        [{ 'x-bypass-auth': 'true', authorization: basic('alice:wrong') }, 200], // bypass wins
        [{ 'x-bypass-auth': 'false', ...ALICE }, 200],
      ];
      for (const [headers, status, error] of cases) {
        const response = await asked(headers);
        if (error === undefined) {
          expect(response.statusCode, JSON.stringify(headers)).toBe(status);
          continue;
        }
        errorOf(response, status, error);
        expect(response.headers['www-authenticate'], JSON.stringify(headers)).toBe(WWW_AUTHENTICATE);
      }
    });

    it('AUTH_BYPASS=deny: bypass with valid credentials is served, without them 403', async () => {
      const deny = await appWith({ AUTH_BYPASS: 'deny' });
      expect((await asked({ 'x-bypass-auth': 'true', ...ALICE }, deny)).statusCode).toBe(200);
      expect((await asked(ALICE, deny)).statusCode).toBe(200);
      const without: Record<string, string>[] = [
        {},
        { authorization: basic('alice:wrong') },
        { authorization: 'Basic !!!' },
      ];
      for (const headers of without) {
        errorOf(await asked({ 'x-bypass-auth': 'TRUE', ...headers }, deny), 403, 'forbidden');
      }
      errorOf(await asked({ 'x-bypass-auth': 'yes' }, deny), 401, 'unauthorized');
    });

    it('reads users from AUTH_USERS_FILE too', async () => {
      const file = join(dir, 'users.txt');
      writeFileSync(file, '# team\ncarol:c-pass\n\n');
      const fromFile = await appWith({ AUTH_USERS: '', AUTH_USERS_FILE: file });
      expect((await asked({ authorization: basic('carol:c-pass') }, fromFile)).statusCode).toBe(200);
      errorOf(await asked(ALICE, fromFile), 401, 'unauthorized');
    });

    it('/health and /ready need no credentials, whatever is sent', async () => {
      for (const headers of [{}, { authorization: 'Basic !!!' }, { 'x-bypass-auth': 'true' }]) {
        expect((await anonymous('/health', { headers })).statusCode).toBe(200);
        expect((await anonymous('/ready', { headers })).statusCode).toBe(200);
      }
    });
  });

  describe('rate limiting (docs/api.md#rate-limiting)', () => {
    // 12:00:15.250 UTC: the window resets in 44.75 s, i.e. 45 whole seconds.
    const NOW = Date.UTC(2030, 0, 1, 12, 0, 15, 250);
    const limits = (r: LightMyRequestResponse) => [
      r.headers['x-ratelimit-limit'],
      r.headers['x-ratelimit-remaining'],
      r.headers['x-ratelimit-reset'],
    ];

    it('counts every answer of the quote paths, refuses the fourth with 429 and Retry-After', async () => {
      let now = NOW;
      const limited = await appWith({ RATE_LIMIT_MAX: '3' }, { now: () => now });
      // Not counted, and without rate-limit headers.
      for (const url of ['/health', '/ready', '/health', '/ready']) {
        const response = await anonymous(url, {}, limited);
        expect(response.statusCode).toBe(200);
        expect(response.headers['x-ratelimit-limit']).toBeUndefined();
      }
      const counted = [
        await anonymous('/quotes?limit=ten', {}, limited), // 401: before authentication
        await send('/quotes?limit=ten', {}, limited), // 400
        await limited.inject({ method: 'DELETE', url: '/quotes/1' }), // 405
      ];
      expect(counted.map((r) => r.statusCode)).toEqual([401, 400, 405]);
      expect(counted.map(limits)).toEqual([
        ['3', '2', '45'],
        ['3', '1', '45'],
        ['3', '0', '45'],
      ]);
      for (const refused of [
        await send('/quotes', {}, limited),
        await anonymous('/api/v1/quotes', { method: 'HEAD' }, limited),
      ]) {
        expect(refused.statusCode).toBe(429);
        expect(refused.headers['content-type']).toBe(JSON_TYPE);
        expect(refused.headers['retry-after']).toBe('45');
        expect(limits(refused)).toEqual(['3', '0', '45']);
      }
      const body = errorOf(await send('/quotes/random', {}, limited), 429, 'too_many_requests');
      expect(body.details).toMatch(/\b3\b.*\b45 seconds\b/);
      // Until the minute ends, whatever the path; then a new window.
      now = Date.UTC(2030, 0, 1, 12, 0, 59, 999);
      const last = await send('/quotes/1200', {}, limited);
      expect(last.statusCode).toBe(429);
      expect(last.headers['retry-after']).toBe('1');
      now = Date.UTC(2030, 0, 1, 12, 1, 0, 0);
      const fresh = await send('/quotes/1200', {}, limited);
      expect(fresh.statusCode).toBe(200);
      expect(limits(fresh)).toEqual(['3', '2', '60']);
    });

    it('counts each client by the forwarded address only when TRUST_PROXY is set', async () => {
      // A fixed clock: one window for the whole test.
      const proxied = await appWith({ RATE_LIMIT_MAX: '1', TRUST_PROXY: 'true' }, { now: () => NOW });
      const from = (ip: string, target: FastifyInstance) =>
        send('/quotes/1200', { remoteAddress: '10.0.0.1', headers: { 'x-forwarded-for': ip } }, target);
      expect((await from('203.0.113.1', proxied)).statusCode).toBe(200);
      expect((await from('203.0.113.2', proxied)).statusCode).toBe(200);
      expect((await from('203.0.113.1', proxied)).statusCode).toBe(429);
      const direct = await appWith({ RATE_LIMIT_MAX: '1' }, { now: () => NOW });
      expect((await from('203.0.113.1', direct)).statusCode).toBe(200);
      expect((await from('203.0.113.2', direct)).statusCode).toBe(429);
    });
  });

  describe('caching (docs/api.md#caching)', () => {
    it('list, id and v1 answers carry an ETag and Cache-Control; If-None-Match gets 304 without a body', async () => {
      for (const url of ['/quotes?author=emile+zola', '/quotes/1200', '/api/v1/quotes?genre=romance']) {
        const first = await send(url);
        expect(first.headers['cache-control'], url).toBe('private, max-age=60');
        const etag = first.headers.etag as string;
        expect(etag, url).toMatch(/^(W\/)?"[^"]+"$/);
        for (const method of ['GET', 'HEAD'] as const) {
          const again = await send(url, { method, headers: { 'if-none-match': etag } });
          expect(again.statusCode, url).toBe(304);
          expect(again.body).toBe('');
          expect(again.headers.etag).toBe(etag);
          expect(again.headers['cache-control']).toBe('private, max-age=60');
          expect(again.headers['content-type']).toBe(JSON_TYPE);
        }
        expect((await send(url, { headers: { 'if-none-match': '"other"' } })).statusCode).toBe(200);
        // Credentials are still checked first.
        errorOf(await anonymous(url, { headers: { 'if-none-match': etag } }), 401);
      }
    });

    it('the ETag follows the result: same for equivalent requests, different for another result', async () => {
      const etag = async (url: string) => (await send(url)).headers.etag;
      expect(await etag('/quotes?author=emile+zola')).toBe(
        await etag('/quotes?author=%C3%89MILE++Zola&page=1&limit=5'),
      );
      expect(await etag('/quotes?author=emile+zola')).not.toBe(
        await etag('/quotes?author=emile+zola&fields=id'),
      );
      expect(await etag('/quotes?sort=author')).not.toBe(await etag('/quotes?sort=author&order=desc'));
      expect(await etag('/quotes/3')).not.toBe(await etag('/quotes/4'));
    });

    it('serves a catalogue replaced by the indexer within 5 s, under a new ETag', async () => {
      const liveDir = mkdtempSync(join(dir, 'live-'));
      const liveEnv = backend.env('live');
      const first = join(liveDir, 'first.json');
      const second = join(liveDir, 'second.json');
      writeFileSync(first, JSON.stringify(RECORDS.slice(0, 10)));
      writeFileSync(second, JSON.stringify([...RECORDS.slice(0, 9), { ...RECORDS[9], quote: 'Replaced.' }]));
      await indexFile(first, loadConfig({ ...liveEnv, LOG_LEVEL: 'silent' }));
      const live = await appWith(liveEnv);
      const id = RECORDS[9]?.id as number;
      const before = await send(`/quotes/${id}`, {}, live);
      const list = await send('/quotes?limit=100', {}, live);
      expect(before.json().quote).toBe(RECORDS[9]?.quote);

      const indexed = await run(['indexer/cli.ts', second], liveEnv);
      expect(indexed.code, indexed.stderr).toBe(0);
      // Until the new catalogue is served, the old ETag still matches: 304.
      const start = Date.now();
      let after: LightMyRequestResponse;
      do {
        await new Promise((resolve) => setTimeout(resolve, 100));
        after = await send(
          `/quotes/${id}`,
          { headers: { 'if-none-match': before.headers.etag as string } },
          live,
        );
      } while (after.statusCode === 304 && Date.now() - start < 5000);
      expect(after.statusCode).toBe(200);
      expect(after.json().quote).toBe('Replaced.');
      expect(after.headers.etag).not.toBe(before.headers.etag);
      const listAfter = await send(
        '/quotes?limit=100',
        { headers: { 'if-none-match': list.headers.etag as string } },
        live,
      );
      expect(listAfter.statusCode).toBe(200);
    });
  });

  /** Runs `node <args>` from the repository root with only `env` (and PATH) set. */
  function run(args: string[], env: Record<string, string>): Promise<Finished> {
    return runProcess(process.execPath, args, {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      timeoutMs: 10_000,
    });
  }

  describe('configuration (docs/configuration.md#configuration)', () => {
    it('an invalid variable stops the service with one line naming it and a non-zero exit', async () => {
      const bad: [string, string][] = [
        ['PORT', 'abc'],
        ['SEARCH_BACKEND', 'x'],
        ['RATE_LIMIT_MAX', '0'],
        ['AUTH_BYPASS', 'maybe'],
        ['LOG_LEVEL', 'loud'],
        ['RATE_LIMIT_STORE', 'redis'],
        ['TRUST_PROXY', 'abc'],
        ['TRUST_PROXY', '10.0.0.0/33'],
        ['HOST', '999.1.1.1'],
        ['HOST', 'not a host'],
        ['REDIS_URL', 'redis://host:notaport'],
        ['MEILI_HOST', 'http://host:99999'],
        ['AUTH_USERS', 'ann:1,bob:2,ann:3'],
      ];
      // A few at a time: each start costs a core for a while, and a process that waits for a core
      // past `run`'s 10 s limit would be killed before it could say anything.
      const results: Awaited<ReturnType<typeof run>>[] = [];
      for (let i = 0; i < bad.length; i += 3) {
        results.push(
          ...(await Promise.all(
            bad
              .slice(i, i + 3)
              .map(([name, value]) =>
                run(['service/server.ts'], { ...catalogueEnv, PORT: '0', [name]: value }),
              ),
          )),
        );
      }
      for (const [i, result] of results.entries()) {
        const [name] = bad[i] as [string, string];
        expect(result.code, name).not.toBe(0);
        expect(result.stdout, name).toBe('');
        const lines = result.stderr.trimEnd().split('\n');
        expect(lines, name).toHaveLength(1);
        // RATE_LIMIT_STORE=redis is fine alone; what is missing is REDIS_URL.
        expect(lines[0], name).toContain(name === 'RATE_LIMIT_STORE' ? 'REDIS_URL' : name);
      }
    });
  });

  describe('robustness over real HTTP', () => {
    it('never answers with a stack trace or Fastify’s own error shape', async () => {
      const requests: [head: string, body?: string][] = [
        ['GET /quotes/%E0%A4%A HTTP/1.1'],
        ['GET /quotes/%zz HTTP/1.1'],
        ['GET /nope%zz HTTP/1.1'],
        ['GET /quotes?author=%E0%A4%A HTTP/1.1\r\nX-Bypass-Auth: true'],
        ['GET /quotes?%zz=1 HTTP/1.1\r\nX-Bypass-Auth: true'],
        ['GET /quotes?author=a%00b HTTP/1.1\r\nX-Bypass-Auth: true'],
        ['GET /quotes/1%00 HTTP/1.1\r\nX-Bypass-Auth: true'],
        ['GET /x%00 HTTP/1.1'],
        [`GET /quotes/${'1'.repeat(5000)} HTTP/1.1\r\nX-Bypass-Auth: true`],
        [`GET /quotes?author=${'a'.repeat(9000)} HTTP/1.1\r\nX-Bypass-Auth: true`],
        [`GET /quotes?author=${'a'.repeat(20000)} HTTP/1.1\r\nX-Bypass-Auth: true`],
        [
          'GET /quotes?limit=1 HTTP/1.1\r\nX-Bypass-Auth: true\r\nContent-Type: application/json\r\nContent-Length: 5',
          '{bad}',
        ],
        [
          'GET /quotes?limit=1 HTTP/1.1\r\nX-Bypass-Auth: true\r\nContent-Type: ;;;\r\nContent-Length: 3',
          'abc',
        ],
        [
          'GET /quotes?limit=1 HTTP/1.1\r\nX-Bypass-Auth: true\r\nContent-Type: text/x-unknown\r\nContent-Length: 3000',
          'a'.repeat(3000),
        ],
        [
          `GET /quotes?limit=1 HTTP/1.1\r\n${ALICE.authorization.replace(/^/, 'Authorization: ')}\r\nAuthorization: Bearer x`,
        ],
        ['GET /quotes?limit=1 HTTP/1.1\r\nContent-Length: abc'],
        ['GARBAGE'],
      ];
      for (const [head, body] of requests) {
        const label = head.slice(0, 60);
        const response = await rawRequest(head, body).catch((error: unknown) => {
          throw new Error(
            `${JSON.stringify(head.slice(0, 160))}: ${error instanceof Error ? error.message : String(error)}`,
          );
        });
        expect(response.status, label).toBeGreaterThanOrEqual(200);
        expect(response.headers, label).toContain(`content-type: ${JSON_TYPE}`);
        const json = JSON.parse(response.body) as Record<string, unknown>;
        if (response.status >= 400) {
          expect(Object.keys(json).sort(), label).toEqual(['code', 'details', 'error']);
          expect(json.code, label).toBe(response.status);
        }
        expect(response.body, label).not.toMatch(/statusCode|"message"|\n\s+at |FST_/);
      }
    });
  });
}
