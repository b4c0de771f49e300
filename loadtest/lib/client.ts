/**
 * HTTP helpers of the k6 scripts: authenticated GETs, header look-ups, the vocabulary sampled in
 * `setup()`, and the checks every request of the mix must pass.
 */
import { check } from 'k6';
import http, { type RefinedResponse, type ResponseType } from 'k6/http';
import type { Target } from './config.ts';
import {
  type MixRequest,
  type Random,
  SAMPLE_FIELDS,
  samplePages,
  type Vocabulary,
  vocabularyFrom,
} from './mix.ts';
import { isQuote, isQuotesResponse, isV1Response, parseJson, requestedFields } from './shape.ts';

export type Response = RefinedResponse<ResponseType | undefined>;

/**
 * GET `path` (relative to BASE_URL) with the target's auth headers. `name` becomes the request's
 * `name` tag: thousands of distinct URLs would otherwise each get their own metric series.
 */
export function get(
  target: Target,
  path: string,
  name: string,
  headers: Record<string, string> = {},
): Response {
  return http.get(`${target.baseUrl}${path}`, {
    headers: { ...target.headers, ...headers },
    tags: { name },
  });
}

/** A response header by case-insensitive name (k6 canonicalises names, proxies may not). */
export function header(res: Response, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const key of Object.keys(res.headers)) {
    if (key.toLowerCase() === wanted) return res.headers[key];
  }
  return undefined;
}

/** The body as text (k6 gives null for HEAD and for `responseType: 'none'`). */
export function bodyText(res: Response): string {
  return typeof res.body === 'string' ? res.body : '';
}

/** The parsed JSON body, or undefined. */
export function json(res: Response): unknown {
  return parseJson(bodyText(res));
}

/** True when the content type is the contract's `application/json; charset=utf-8`. */
export function isJsonType(res: Response): boolean {
  return /^application\/json(;\s*charset=utf-8)?$/i.test(header(res, 'content-type') ?? '');
}

/**
 * Samples the catalogue for the mix's filter values: one request for the size and highest id,
 * then `pages` pages of 100 quotes spread across the catalogue. Throws (aborting `setup()`) when
 * the service does not answer as the contract says, with the status it gave.
 */
export function sampleVocabulary(target: Target, pages: number, random: Random = Math.random): Vocabulary {
  const head = get(target, '/quotes?limit=1&sort=id&order=desc&fields=id', 'setup');
  const top = json(head) as { items?: { id?: number }[]; pagination?: { total_quotes?: number } } | undefined;
  const total = top?.pagination?.total_quotes;
  const maxId = top?.items?.[0]?.id;
  if (head.status !== 200 || typeof total !== 'number' || typeof maxId !== 'number') {
    throw new Error(
      `cannot sample the catalogue: GET ${target.baseUrl}/quotes answered ${head.status} ` +
        `${bodyText(head).slice(0, 200)} (check BASE_URL, AUTH_USER/AUTH_PASS or BYPASS, RATE_LIMIT_MAX)`,
    );
  }
  const items: unknown[] = [];
  for (const page of samplePages(total, 100, pages, random)) {
    const res = get(target, `/quotes?limit=100&page=${page}&fields=${SAMPLE_FIELDS}`, 'setup');
    const body = json(res) as { items?: unknown[] } | undefined;
    if (res.status === 200 && Array.isArray(body?.items)) items.push(...body.items);
  }
  return vocabularyFrom(total, maxId, items);
}

/** Runs the checks of one mix request: status 200, JSON, and the shape its path asks for. */
export function checkMix(res: Response, request: MixRequest): boolean {
  return check(
    res,
    {
      'status is 200': (r) => r.status === 200,
      'body has the expected shape': (r) => {
        const body = json(r);
        if (request.expect === 'v1') return isV1Response(body);
        const fields = requestedFields(request.path);
        return request.expect === 'quote' ? isQuote(body, fields) : isQuotesResponse(body, fields);
      },
    },
    { kind: request.kind },
  );
}

/** Sends one request of the mix and checks it; returns the response for extra metrics. */
export function sendMix(target: Target, request: MixRequest): Response {
  const res = get(target, request.path, request.kind);
  checkMix(res, request);
  return res;
}

/**
 * Runs a scripted scenario; an exception (a `fail()`, an unexpected body) becomes a failed check
 * named after the scenario before it propagates, so that a `checks` threshold fails the run
 * even when the exception came before any other check.
 */
export function guarded(name: string, body: () => void): void {
  let completed = false;
  try {
    body();
    completed = true;
  } finally {
    check(null, { [`${name} ran to the end`]: () => completed });
  }
}
