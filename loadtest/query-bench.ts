/**
 * In-process query benchmark of the embedded engine: the list requests of the load-test mix
 * (filters, `_like`, multi-key sorts, deep pages, v1), parsed by the service's own query parser
 * and run straight against a SQLite catalogue, without HTTP. It answers "how fast is one
 * filtered, sorted, paged query" apart from the server around it.
 *
 *   npm run bench:query -- <catalogue.db> [--queries N] [--seed S]
 *
 * Every request is distinct and runs once, cold for its filter set, as an uncached HTTP request
 * would; a second pass repeats them to show the warm cost (counts cached per catalogue version).
 * The `q` row times as many full-text searches drawn as the HTTP benchmark draws them (runs of 1
 * to 3 words of the sampled quotes, the last word sometimes cut), apart from the list requests.
 */
import { parseArgs } from 'node:util';
import { QUOTE_FIELDS, type QuoteProjection, words } from '../service/catalogue/port.ts';
import { openSqliteCatalogue } from '../service/catalogue/sqlite/catalogue.ts';
import { parseListQuery, parseV1Query, readQuery } from '../service/query.ts';
import { searchPathsFrom } from './bench/search.ts';
import { distinctRequests, type MixKind, samplePages, seededRandom, vocabularyFrom } from './lib/mix.ts';

const USAGE = 'usage: npm run bench:query -- <catalogue.db> [--queries N] [--seed S]';
const LIST_KINDS: readonly MixKind[] = ['default', 'filter', 'like', 'sort', 'deep', 'v1'];

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    queries: { type: 'string', default: '600' },
    seed: { type: 'string', default: '1' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help || positionals.length !== 1) {
  console.log(USAGE);
  process.exit(values.help ? 0 : 2);
}
const perKind = Number(values.queries) / LIST_KINDS.length;
const random = seededRandom(Number(values.seed));
const catalogue = openSqliteCatalogue({ path: positionals[0] as string });

try {
  const info = await catalogue.info();
  // The same vocabulary the HTTP benchmark samples, read in-process: 40 pages of 100 quotes.
  const samples: QuoteProjection[] = [];
  for (const page of samplePages(info.count, 100, 40, random)) {
    const result = await catalogue.list({ filters: {}, sort: [], page, limit: 100, fields: QUOTE_FIELDS });
    samples.push(...result.items);
  }
  const maxId =
    (
      await catalogue.list({
        filters: {},
        sort: [{ field: 'id', direction: 'desc' }],
        page: 1,
        limit: 1,
        fields: ['id'],
      })
    ).items[0]?.id ?? 0;
  const vocab = vocabularyFrom(info.count, maxId, samples);

  const rows: string[] = [];
  const all: number[] = [];
  for (const kind of LIST_KINDS) {
    const requests = distinctRequests(vocab, random, perKind, kind).map((r) => {
      const params = readQuery(r.path);
      return r.path.startsWith('/api/v1/') ? parseV1Query(params) : parseListQuery(params);
    });
    const cold = await timeAll(requests);
    const warm = await timeAll(requests);
    all.push(...cold);
    rows.push(row(kind, cold, warm));
  }
  const texts = samples.map((quote) => words(String(quote.quote))).filter((own) => own.length > 0);
  const searches = searchPathsFrom(texts, random, perKind).map((path) => parseListQuery(readQuery(path)));
  const searchCold = await timeAll(searches);
  const searchWarm = await timeAll(searches);
  console.log(`catalogue: ${info.count} quotes (version ${info.version}); node ${process.version}`);
  console.log('| kind | queries | cold p50 ms | cold p90 ms | cold p99 ms | warm p50 ms | warm p99 ms |');
  console.log('|---|---|---|---|---|---|---|');
  for (const line of rows) console.log(line);
  const sorted = all.sort((a, b) => a - b);
  console.log(
    `| all | ${sorted.length} | ${fmt(q(sorted, 0.5))} | ${fmt(q(sorted, 0.9))} | ${fmt(q(sorted, 0.99))} | | |`,
  );
  console.log(row('q', searchCold, searchWarm));

  async function timeAll(queries: ReturnType<typeof parseListQuery>[]): Promise<number[]> {
    const out: number[] = [];
    for (const query of queries) {
      const start = performance.now();
      await catalogue.list(query);
      out.push(performance.now() - start);
    }
    return out;
  }
} finally {
  await catalogue.close();
}

function row(kind: string, cold: number[], warm: number[]): string {
  const c = [...cold].sort((a, b) => a - b);
  const w = [...warm].sort((a, b) => a - b);
  return `| ${kind} | ${c.length} | ${fmt(q(c, 0.5))} | ${fmt(q(c, 0.9))} | ${fmt(q(c, 0.99))} | ${fmt(q(w, 0.5))} | ${fmt(q(w, 0.99))} |`;
}

function q(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}

function fmt(ms: number): string {
  return ms.toFixed(2);
}
