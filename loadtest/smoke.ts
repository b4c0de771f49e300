/**
 * smoke: every endpoint once (and every error the contract defines once), checking status,
 * headers and body shape. One VU, one iteration, a few dozen requests: safe against any
 * deployment, and k6 exits non-zero when any check fails.
 *
 *   k6 run loadtest/smoke.ts
 */
import { check, group } from 'k6';
import encoding from 'k6/encoding';
import http from 'k6/http';
import type { Options } from 'k6/options';
import {
  bodyText,
  get,
  guarded,
  header,
  isJsonType,
  json,
  type Response,
  sampleVocabulary,
} from './lib/client.ts';
import { resultsDir, TREND_STATS, target } from './lib/config.ts';
import { likeValue, type Vocabulary } from './lib/mix.ts';
import { isErrorBody, isQuote, isQuotesResponse, isV1Response } from './lib/shape.ts';
import { type SummaryData, summaryOutputs } from './lib/summary.ts';

const TARGET = target();
// The errors the smoke provokes on purpose are expected answers, not failed requests.
http.setResponseCallback(http.expectedStatuses({ min: 200, max: 399 }, 400, 401, 404, 405));

export const options: Options = {
  scenarios: { smoke: { executor: 'per-vu-iterations', vus: 1, iterations: 1, maxDuration: '2m' } },
  thresholds: { checks: ['rate==1'] },
  summaryTrendStats: TREND_STATS,
};

export function setup(): Vocabulary {
  return sampleVocabulary(TARGET, 1);
}

interface Page {
  items: Record<string, unknown>[];
  pagination: { page: number; limit: number; total_pages: number; total_quotes: number };
}

function page(res: Response): Page | undefined {
  const body = json(res);
  return isQuotesResponse(body, null) ? (body as Page) : undefined;
}

/** The rate-limit headers every counted response carries (docs/api.md#rate-limiting). */
function rateLimitHeaders(res: Response): boolean {
  const limit = Number(header(res, 'x-ratelimit-limit'));
  const remaining = Number(header(res, 'x-ratelimit-remaining'));
  const reset = Number(header(res, 'x-ratelimit-reset'));
  return (
    Number.isInteger(limit) &&
    limit >= 1 &&
    Number.isInteger(remaining) &&
    remaining >= 0 &&
    remaining < limit &&
    Number.isInteger(reset) &&
    reset >= 1 &&
    reset <= 60
  );
}

function expectError(res: Response, status: number, error: string): boolean {
  return check(res, {
    [`${status} ${error}`]: (r) => r.status === status,
    [`${status} ${error} has the Error body`]: (r) => isErrorBody(json(r), status, error) && isJsonType(r),
  });
}

const q = encodeURIComponent;

export default function (vocab: Vocabulary): void {
  guarded('smoke', () => smoke(vocab));
}

function smoke(vocab: Vocabulary): void {
  const sample = vocab.samples[0];
  if (sample === undefined) throw new Error('setup sampled no quote');
  const genre = sample.genre[0] ?? '';

  group('health and readiness', () => {
    const health = http.get(`${TARGET.baseUrl}/health`, { tags: { name: 'health' } });
    check(health, {
      'GET /health is 200 {"status":"ok"}': (r) =>
        r.status === 200 && (json(r) as { status?: string } | undefined)?.status === 'ok',
    });
    const ready = http.get(`${TARGET.baseUrl}/ready`, { tags: { name: 'ready' } });
    check(ready, {
      'GET /ready is 200 {"status":"ready"}': (r) =>
        r.status === 200 && (json(r) as { status?: string } | undefined)?.status === 'ready',
    });
  });

  group('list', () => {
    const res = get(TARGET, '/quotes', 'list');
    const body = page(res);
    check(res, {
      'GET /quotes is 200': (r) => r.status === 200,
      'GET /quotes is a QuotesResponse of page 1, 5 items, by id': () =>
        body !== undefined &&
        body.pagination.page === 1 &&
        body.pagination.limit === 5 &&
        body.items.length === Math.min(5, body.pagination.total_quotes) &&
        body.items.every((item, i) => i === 0 || (item.id as number) > (body.items[i - 1]?.id as number)),
      'GET /quotes is application/json': (r) => isJsonType(r),
      'GET /quotes carries X-RateLimit-Limit/Remaining/Reset': (r) => rateLimitHeaders(r),
      'GET /quotes carries an ETag and Cache-Control': (r) =>
        (header(r, 'etag') ?? '') !== '' && /max-age=60/.test(header(r, 'cache-control') ?? ''),
    });
    const etag = header(res, 'etag');
    if (etag !== undefined) {
      const again = get(TARGET, '/quotes', 'list', { 'If-None-Match': etag });
      check(again, {
        'If-None-Match with the ETag is 304 without body': (r) => r.status === 304 && bodyText(r) === '',
      });
    }
    const head = http.head(`${TARGET.baseUrl}/quotes`, { headers: TARGET.headers, tags: { name: 'head' } });
    check(head, { 'HEAD /quotes is 200': (r) => r.status === 200 });
  });

  group('filters, sorts, pages, fields', () => {
    const byAuthor = page(get(TARGET, `/quotes?author=${q(sample.author)}&limit=100`, 'filter'));
    check(byAuthor, {
      'author= returns only that author': (b) => b?.items.every((i) => i.author === sample.author) === true,
    });
    const byGenre = page(get(TARGET, `/quotes?genre=${q(genre)}&limit=100`, 'filter'));
    check(byGenre, {
      'genre= returns only quotes of that genre': (b) =>
        b?.items.every((i) => (i.genre as string[]).some((g) => g.toLowerCase() === genre.toLowerCase())) ===
        true,
    });
    const byIds = page(
      get(TARGET, `/quotes?author_id=${sample.author_id}&work_id=${sample.work_id}`, 'filter'),
    );
    check(byIds, {
      'author_id= and work_id= combine': (b) =>
        b?.items.every((i) => i.author_id === sample.author_id && i.work_id === sample.work_id) === true,
    });
    const prefix = likeValue(sample.author, Math.random);
    if (prefix !== null) {
      const like = page(get(TARGET, `/quotes?author_like=${q(prefix)}&limit=100`, 'like'));
      check(like, {
        'author_like= finds the sampled author': (b) => b !== undefined && b.pagination.total_quotes >= 1,
      });
    }
    const sorted = page(get(TARGET, '/quotes?sort=quote_length,author&order=desc,asc&limit=20', 'sort'));
    check(sorted, {
      'multi-key sort orders by the first key': (b) =>
        b?.items.every(
          (item, i) => i === 0 || (item.quote_length as number) <= (b.items[i - 1]?.quote_length as number),
        ) === true,
    });
    const last = page(get(TARGET, '/quotes?limit=100', 'list'));
    if (last !== undefined) {
      const lastPage = last.pagination.total_pages;
      const deep = get(TARGET, `/quotes?limit=100&page=${lastPage}`, 'deep');
      check(deep, { 'the last page is 200': (r) => r.status === 200 && page(r) !== undefined });
      expectError(get(TARGET, `/quotes?limit=100&page=${lastPage + 1}`, 'deep'), 404, 'not_found');
    }
    const fields = get(TARGET, '/quotes?fields=id,quote', 'list');
    check(fields, {
      'fields= returns exactly those fields': (r) => isQuotesResponse(json(r), ['id', 'quote']),
    });
  });

  group('one quote', () => {
    const byId = get(TARGET, `/quotes/${sample.id}`, 'id');
    check(byId, {
      'GET /quotes/{id} is that Quote': (r) =>
        r.status === 200 && isQuote(json(r)) && (json(r) as { id: number }).id === sample.id,
    });
    const random = get(TARGET, '/quotes/random', 'random');
    check(random, {
      'GET /quotes/random is one Quote': (r) => r.status === 200 && isQuote(json(r)),
      'GET /quotes/random is not cached': (r) => /no-store/.test(header(r, 'cache-control') ?? ''),
    });
    const v1 = get(TARGET, `/api/v1/quotes?genre=${q(genre)}`, 'v1');
    check(v1, {
      'GET /api/v1/quotes?genre= is the V1 envelope': (r) => r.status === 200 && isV1Response(json(r)),
    });
  });

  group('errors', () => {
    expectError(get(TARGET, '/quotes?limit=ten', 'error'), 400, 'bad_request');
    expectError(get(TARGET, '/quotes?colour=red', 'error'), 400, 'bad_request');
    expectError(get(TARGET, '/api/v1/quotes', 'error'), 400, 'bad_request');
    expectError(get(TARGET, `/quotes/${vocab.maxId + 1}`, 'error'), 404, 'not_found');
    expectError(get(TARGET, '/no-such-path', 'error'), 404, 'not_found');
    const post = http.post(`${TARGET.baseUrl}/quotes`, null, {
      headers: TARGET.headers,
      tags: { name: 'error' },
    });
    expectError(post, 405, 'method_not_allowed');
    check(post, {
      '405 lists Allow: GET, HEAD': (r) =>
        /GET/.test(header(r, 'allow') ?? '') && /HEAD/.test(header(r, 'allow') ?? ''),
    });
    const anonymous = http.get(`${TARGET.baseUrl}/quotes`, { tags: { name: 'error' } });
    expectError(anonymous, 401, 'unauthorized');
    check(anonymous, { '401 asks for Basic': (r) => /^Basic /.test(header(r, 'www-authenticate') ?? '') });
    const garbled = http.get(`${TARGET.baseUrl}/quotes`, {
      headers: { Authorization: `Basic ${encoding.b64encode('no-colon-here')}` },
      tags: { name: 'error' },
    });
    expectError(garbled, 401, 'invalid_credentials');
  });
}

export function handleSummary(data: SummaryData): Record<string, string> {
  return summaryOutputs(data, {
    script: 'smoke',
    title: 'every endpoint and every contract error once: status, headers and body shape',
    dir: resultsDir(),
    settings: { base_url: TARGET.baseUrl, auth: TARGET.auth },
  });
}
