/**
 * Request and response schemas of every route, declared once with TypeBox. Fastify compiles the
 * response schemas into serialisers (fast, and nothing outside the schema can leak into a body);
 * @fastify/swagger turns all of them into the OpenAPI document. Request schemas are documentation
 * only: `query.ts` validates requests, with the contract's own messages.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import { LANGUAGE_CODES } from './catalogue/language.ts';
import {
  DEFAULT_FACET_LIMIT,
  DEFAULT_LIMIT,
  FACET_FIELDS,
  MAX_EXCLUDE,
  MAX_FACET_LIMIT,
  MAX_FILTER_VALUES,
  MAX_LIMIT,
  MAX_VALUE_LENGTH,
  QUOTE_FIELDS,
  SORT_FIELDS,
} from './catalogue/port.ts';
import { MAX_LENGTH_BOUND } from './catalogue/ranges.ts';
import { MAX_SAMPLE } from './catalogue/sample.ts';
import { MAX_QUERY_WORD_LENGTH, MAX_QUERY_WORDS } from './catalogue/search.ts';
import { DIRECTIONS, MAX_SORT_KEYS, V1_DEFAULT_LIMIT, V1_ORDER_FIELDS } from './query.ts';
import { anyCasePattern, listPattern } from './text-patterns.ts';

/** The contract's Error object (docs/api.md#errors). */
export const ErrorSchema = Type.Object(
  {
    code: Type.Integer({ description: 'The HTTP status code', examples: [400] }),
    error: Type.String({
      description:
        'bad_request, unauthorized, invalid_credentials, forbidden, not_found, method_not_allowed, too_many_requests, internal_server_error or service_unavailable',
      examples: ['bad_request'],
    }),
    details: Type.String({
      description: 'One sentence naming the parameter and what it accepts',
      examples: ["limit must be an integer from 1 to 100, got 'ten'"],
    }),
  },
  { $id: 'Error', additionalProperties: false, description: 'Every error, on every path, has this shape' },
);

const quoteProperties = {
  id: Type.Integer({ minimum: 1, description: 'Unique identifier; the default sort key' }),
  author: Type.String({ description: "Author's name" }),
  author_id: Type.Integer({ minimum: 1, description: 'One author_id per author name' }),
  work: Type.String({ description: 'Title of the work' }),
  work_id: Type.Integer({ minimum: 1, description: 'One work_id per (work, author)' }),
  category: Type.String({ description: 'e.g. fiction, nonfiction, poetry, drama' }),
  genre: Type.Array(Type.String(), { minItems: 1, description: 'Genres, in source order; always an array' }),
  publish_date: Type.String({ description: 'YYYY-MM-DD, YYYY-MM or YYYY, as precise as known' }),
  quote_length: Type.Integer({ minimum: 1, description: 'Number of Unicode code points of quote' }),
  source: Type.String({ format: 'uri', description: 'http(s) URL of the text or record of the work' }),
  quote: Type.String({ description: 'The text of the quote' }),
  language: Type.String({
    pattern: '^[a-z]{2}$',
    description:
      'ISO 639-1 code of the language the quote is written in (a translation has its own), e.g. en, fr, de, es; absent when the data file did not give one',
  }),
};

/**
 * A Quote. Every field is present unless the request asked for `fields`, in which case exactly
 * those are: hence every property is optional here, and none outside the list can appear.
 */
export const QuoteSchema = Type.Partial(Type.Object(quoteProperties), {
  $id: 'Quote',
  additionalProperties: false,
  description: 'A quote; with `fields`, only the requested fields appear, otherwise all of them',
});

/** One item of `/api/v1/quotes`: exactly these eight fields. */
export const V1QuoteSchema = Type.Object(
  {
    id: quoteProperties.id,
    author: quoteProperties.author,
    work: quoteProperties.work,
    genre: quoteProperties.genre,
    publish_date: quoteProperties.publish_date,
    quote_length: quoteProperties.quote_length,
    source: quoteProperties.source,
    quote: quoteProperties.quote,
  },
  { $id: 'V1Quote', additionalProperties: false },
);

export const PaginationSchema = Type.Object(
  {
    page: Type.Integer({ minimum: 1, description: 'This page' }),
    limit: Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: 'Items per page' }),
    total_pages: Type.Integer({ minimum: 1, description: 'ceil(total_quotes / limit)' }),
    total_quotes: Type.Integer({ minimum: 1, description: 'Quotes matching the request' }),
  },
  { $id: 'Pagination', additionalProperties: false },
);

export const QuotesResponseSchema = Type.Object(
  { items: Type.Array(Type.Ref(QuoteSchema)), pagination: Type.Ref(PaginationSchema) },
  { $id: 'QuotesResponse', additionalProperties: false },
);

export const V1ResponseSchema = Type.Object(
  {
    status_code: Type.Literal(200),
    data: Type.Array(Type.Ref(V1QuoteSchema)),
    pagination: Type.Ref(PaginationSchema),
  },
  { $id: 'V1Response', additionalProperties: false },
);

export const HealthSchema = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false });
export const ReadySchema = Type.Object({ status: Type.Literal('ready') }, { additionalProperties: false });

/** Schemas referenced by `$id`; registered once with `app.addSchema`, listed in the OpenAPI components. */
export const SHARED_SCHEMAS: readonly TSchema[] = [
  ErrorSchema,
  QuoteSchema,
  V1QuoteSchema,
  PaginationSchema,
  QuotesResponseSchema,
  V1ResponseSchema,
];

/**
 * Response headers, as @fastify/swagger lists them in the OpenAPI document (a `headers` entry
 * beside a response schema; Fastify's serialiser ignores it). Every counted response carries
 * the rate-limit headers (docs/api.md#rate-limiting).
 */
const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': Type.Integer({ description: 'Requests allowed per clock minute (RATE_LIMIT_MAX)' }),
  'X-RateLimit-Remaining': Type.Integer({ description: 'Requests left in this minute' }),
  'X-RateLimit-Reset': Type.Integer({ description: 'Whole seconds until the minute ends (1 to 60)' }),
};
const CACHE_RESPONSE_HEADERS = {
  ...RATE_LIMIT_HEADERS,
  ETag: Type.String({ description: 'Weak tag of this answer for this catalogue version' }),
  'Cache-Control': Type.String({ description: 'private, max-age=60' }),
};
const NO_STORE_HEADERS = {
  ...RATE_LIMIT_HEADERS,
  'Cache-Control': Type.String({ description: 'no-store' }),
};

const errorRef = (description: string, headers: Record<string, TSchema> = NO_STORE_HEADERS) =>
  Type.Ref(ErrorSchema, { description, headers });
const CACHE_HEADERS = 'Carries an ETag and Cache-Control: private, max-age=60.';
const notModified = Type.Null({
  description: 'Not Modified: If-None-Match matched the current ETag; no body',
  headers: CACHE_RESPONSE_HEADERS,
});

const RETRY_AFTER_UNAVAILABLE = Type.Integer({
  description:
    'Whole seconds to wait before asking again: 1 when the catalogue sheds load, 5 during an outage',
});

/**
 * The error statuses a quote path can answer (docs/api.md#errors), in check order; `notFound` says when
 * this route answers 404. (Other methods than GET and HEAD get 405 with `Allow: GET, HEAD`; an
 * OpenAPI operation is one method, so no operation lists it.)
 */
const quoteErrors = (notFound: string) => ({
  400: errorRef('An invalid parameter (bad_request)'),
  401: errorRef(
    'Missing or wrong credentials (unauthorized), or malformed Basic value (invalid_credentials)',
    {
      ...NO_STORE_HEADERS,
      'WWW-Authenticate': Type.String({ description: 'Basic realm="quotes", charset="UTF-8"' }),
    },
  ),
  403: errorRef('X-Bypass-Auth sent while bypass is disabled, without valid credentials (forbidden)'),
  404: errorRef(`${notFound} (not_found)`),
  429: errorRef('Per-minute request limit exceeded (too_many_requests)', {
    ...NO_STORE_HEADERS,
    'Retry-After': Type.Integer({ description: 'Whole seconds until the next minute begins (1 to 60)' }),
  }),
  500: errorRef('A bug; details never hold internals (internal_server_error)'),
  503: errorRef('The catalogue is unreachable or not built yet, or busy (service_unavailable)', {
    'Retry-After': RETRY_AFTER_UNAVAILABLE,
  }),
});

/**
 * What each parameter's example holds: the first quote of the bundled catalogue (data/quotes.json),
 * which every example finds, alone or all together.
 */
const EXAMPLE = {
  id: 1,
  author: 'Jane Austen',
  author_id: 1,
  author_like: 'jane aus',
  work: 'Pride and Prejudice',
  work_id: 1,
  work_like: 'pride prej',
  category: 'fiction',
  genre: 'romance',
  q: 'truth universally ack',
} as const;

/**
 * The keyword marking a text value whose characters the OpenAPI document constrains: `folded`
 * (something left once folded) or `words` (a letter or digit once folded). The document replaces
 * it with a shared schema and its pattern (openapi.ts, text-patterns.ts), built when the document
 * is first asked for, as deriving the patterns takes a moment.
 */
export const TEXT_KIND = 'x-text';
export type TextKind = 'folded' | 'words';

const text = (kind: TextKind, example: string, description: string) =>
  Type.Optional(
    Type.Array(Type.String({ [TEXT_KIND]: kind }), {
      maxItems: MAX_FILTER_VALUES,
      description: `${description} Repeat the parameter to match any of several values (at most ${MAX_FILTER_VALUES}).`,
      examples: [[example]],
    }),
  );
const ids = (example: number, description: string) =>
  Type.Optional(
    Type.Array(Type.Integer({ minimum: 1 }), {
      maxItems: MAX_FILTER_VALUES,
      description: `${description} Repeatable (any of them).`,
      examples: [[example]],
    }),
  );

const filterParams = {
  author: text(
    'folded',
    EXAMPLE.author,
    "Author's name, compared in folded form (case, accents and spacing ignored).",
  ),
  author_id: ids(EXAMPLE.author_id, 'Author id.'),
  author_like: text(
    'words',
    EXAMPLE.author_like,
    'Words that each begin some word of the author name, in any order (aust, jane aus).',
  ),
  work: text('folded', EXAMPLE.work, 'Title of the work, compared in folded form.'),
  work_id: ids(EXAMPLE.work_id, 'Work id.'),
  work_like: text(
    'words',
    EXAMPLE.work_like,
    'Words that each begin some word of the title, in any order (pride prej).',
  ),
  category: text('folded', EXAMPLE.category, 'Category, compared in folded form (fiction, poetry…).'),
  genre: text(
    'folded',
    EXAMPLE.genre,
    'Genre; matches when any genre of the quote equals it in folded form.',
  ),
  language: Type.Optional(
    Type.Array(Type.String({ pattern: anyCasePattern([...LANGUAGE_CODES].sort()) }), {
      maxItems: MAX_FILTER_VALUES,
      description: `ISO 639-1 code of the quote's language (any case): en, fr, de, es… An unknown code is a 400. Repeatable (any of them, at most ${MAX_FILTER_VALUES}).`,
      examples: [['en']],
    }),
  ),
};
/** `q` (search.ts): one value, its words each a word of the quote, the last one possibly begun. */
const searchParam = Type.Optional(
  Type.String({
    [TEXT_KIND]: 'words',
    maxLength: MAX_VALUE_LENGTH,
    description:
      `Full-text search over the quote's text, its author and its work, in folded words (case and accents ignored): ` +
      `every word must equal a word of one of them, except the last, which may be the beginning of one (as you type). ` +
      `No typo tolerance; combines with every filter. At most ${MAX_QUERY_WORDS} words of at most ${MAX_QUERY_WORD_LENGTH} characters, ` +
      'with at least one letter or digit. On /quotes without `sort` or `order`, the matches come by relevance: ' +
      'quotes whose text holds the words side by side and in order first, then quotes whose text holds them all, then quotes matched through their author or work.',
    examples: [EXAMPLE.q],
  }),
);
/**
 * A `YYYY`, `YYYY-MM` or `YYYY-MM-DD` that names a real day of the proleptic Gregorian calendar:
 * months of 31 and 30 days, February of 28, and its 29th in leap years only.
 */
const CALENDAR_DATE = [
  '^[0-9]{4}(-(0[1-9]|1[0-2]))?$',
  '^[0-9]{4}-(0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])$',
  '^[0-9]{4}-(0[469]|11)-(0[1-9]|[12][0-9]|30)$',
  '^[0-9]{4}-02-(0[1-9]|1[0-9]|2[0-8])$',
  '^([0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)-02-29$',
].join('|');

/** Range filters: bounds on quote_length and publish_date (service/catalogue/ranges.ts). */
const lengthBound = (example: number, description: string) =>
  Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_LENGTH_BOUND, description, examples: [example] }));
const dateBound = (example: string, description: string) =>
  Type.Optional(
    Type.String({
      pattern: CALENDAR_DATE,
      description: `${description} YYYY, YYYY-MM or YYYY-MM-DD (a real calendar date); a partial date, here and in the catalogue, stands for its first day.`,
      examples: [example],
    }),
  );
const rangeParams = {
  min_length: lengthBound(50, 'Shortest quote_length kept (code points), inclusive.'),
  max_length: lengthBound(
    200,
    'Longest quote_length kept (code points), inclusive. Not below min_length (else 400).',
  ),
  published_from: dateBound('1800', 'Earliest publish_date kept, inclusive.'),
  published_to: dateBound(
    '1900-06',
    'Latest publish_date kept, inclusive: published_to=1813 keeps 1813, 1813-01 and 1813-01-01 but not 1813-01-28. Not before published_from (else 400).',
  ),
};
const countParam = Type.Optional(
  Type.Integer({
    minimum: 1,
    maximum: MAX_SAMPLE,
    description: `How many distinct quotes to draw, 1 to ${MAX_SAMPLE}: the answer is then an array (fewer when fewer match; 404 when none does).`,
    examples: [3],
  }),
);
const excludeParam = Type.Optional(
  Type.String({
    pattern: `^[1-9][0-9]*(,[1-9][0-9]*){0,${MAX_EXCLUDE - 1}}$`,
    description: `Comma-separated ids (at most ${MAX_EXCLUDE}) that the draw leaves out, e.g. the quotes already shown: a uniform draw among the other matches; 404 when every match is excluded. Ids that match nothing are ignored.`,
    examples: ['2,3'],
  }),
);
const fieldsParam = Type.Optional(
  Type.String({
    pattern: listPattern(QUOTE_FIELDS),
    maxLength: MAX_VALUE_LENGTH,
    description: `Comma-separated fields each item holds: ${QUOTE_FIELDS.join(', ')}. Duplicates are ignored.`,
    examples: ['id,author,quote'],
  }),
);
const direction = (description: string, example: string) =>
  Type.Optional(Type.String({ pattern: anyCasePattern(DIRECTIONS), description, examples: [example] }));
const pageParam = Type.Optional(Type.Integer({ minimum: 1, default: 1, examples: [1] }));
const limitParam = (fallback: number) =>
  Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: fallback, examples: [fallback] }));

/** Either scheme suffices (OpenAPI lists alternatives). */
const security: Record<string, string[]>[] = [{ basicAuth: [] }, { bypassAuth: [] }];

export const listQuotesSchema = {
  summary: 'List quotes',
  description:
    'One page of the quotes matching every filter given (several values of one filter: any of them), ' +
    'sorted by `sort` then id (with `q` and neither `sort` nor `order`: by relevance). Defaults: page 1 of 5 quotes by id ascending.',
  tags: ['quotes'],
  security,
  querystring: Type.Object(
    {
      ...filterParams,
      q: searchParam,
      ...rangeParams,
      sort: Type.Optional(
        Type.String({
          pattern: listPattern(SORT_FIELDS, MAX_SORT_KEYS),
          maxLength: MAX_VALUE_LENGTH,
          description: `Sort keys, comma-separated (or by repeating \`sort\`), primary first, at most ${MAX_SORT_KEYS}: ${SORT_FIELDS.join(', ')}. Default id.`,
          examples: ['author,publish_date'],
        }),
      ),
      // Several directions must pair one to one with the sort keys: a rule between two
      // parameters, which OpenAPI cannot state, so the document gives the one-value form.
      order: direction(
        'asc or desc (any case), default asc, for every sort key. The service also takes one direction per sort key, comma-separated or repeated, paired by position (`sort=author,id&order=asc,desc`): then there must be exactly one per key.',
        'desc',
      ),
      page: pageParam,
      limit: limitParam(DEFAULT_LIMIT),
      fields: fieldsParam,
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Ref(QuotesResponseSchema, {
      description: `One page of quotes. ${CACHE_HEADERS}`,
      headers: CACHE_RESPONSE_HEADERS,
    }),
    304: notModified,
    ...quoteErrors('Nothing matches, or a page past the last (its details name the last page)'),
  },
};

export const randomQuoteSchema = {
  summary: 'A random quote',
  description:
    'One quote chosen uniformly among those matching the filters. Never cached (Cache-Control: no-store).',
  tags: ['quotes'],
  security,
  querystring: Type.Object(
    {
      ...filterParams,
      ...rangeParams,
      q: searchParam,
      count: countParam,
      exclude: excludeParam,
      fields: fieldsParam,
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Union(
      [Type.Ref(QuoteSchema), Type.Array(Type.Ref(QuoteSchema), { minItems: 1, maxItems: MAX_SAMPLE })],
      {
        description:
          'One quote; with `count`, an array of up to `count` distinct quotes in random order (all the matches when fewer match). Cache-Control: no-store',
        headers: NO_STORE_HEADERS,
      },
    ),
    ...quoteErrors('No quote matches the filters'),
  },
};

/** Headers of the quote of the day: cacheable by anyone until midnight UTC. */
const TODAY_HEADERS = {
  ...RATE_LIMIT_HEADERS,
  ETag: Type.String({ description: 'Weak tag; changes with the day, the catalogue, the filters and fields' }),
  'Cache-Control': Type.String({ description: 'public, max-age=<seconds until midnight UTC, 1 to 86400>' }),
  Vary: Type.String({
    description:
      'Authorization, X-Bypass-Auth (after Origin when CORS is on): a shared cache serves a stored answer only to requests with the same credentials',
  }),
};

export const todayQuoteSchema = {
  summary: 'The quote of the day',
  description:
    "One quote per UTC day among those matching the filters, the same on every replica: the SHA-256 of the UTC date and the canonical filters picks an offset in the exact number of matches, and the quote at that offset by id ascending is the day's. It changes at midnight UTC (and when the catalogue is replaced). Cache-Control: public, max-age=<seconds until midnight UTC>; an ETag, as list answers have.",
  tags: ['quotes'],
  security,
  querystring: Type.Object(
    { ...filterParams, ...rangeParams, fields: fieldsParam },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Ref(QuoteSchema, {
      description: "The day's quote. Cache-Control: public, max-age=<seconds until midnight UTC>",
      headers: TODAY_HEADERS,
    }),
    304: Type.Null({
      description: 'Not Modified: If-None-Match matched the current ETag; no body',
      headers: TODAY_HEADERS,
    }),
    ...quoteErrors('No quote matches the filters'),
  },
};

export const quoteByIdSchema = {
  summary: 'One quote by id',
  tags: ['quotes'],
  security,
  params: Type.Object({ id: Type.Integer({ minimum: 1, description: 'Quote id', examples: [EXAMPLE.id] }) }),
  querystring: Type.Object({ fields: fieldsParam }, { additionalProperties: false }),
  response: {
    200: Type.Ref(QuoteSchema, {
      description: `The quote. ${CACHE_HEADERS}`,
      headers: CACHE_RESPONSE_HEADERS,
    }),
    304: notModified,
    ...quoteErrors('No quote has this id'),
  },
};

export const v1QuotesSchema = {
  summary: 'Quotes by genre (versioned form)',
  description:
    'The genre form of the original service: `sort` is the direction here, `orderby` the key; items hold exactly id, author, work, genre, publish_date, quote_length, source, quote.',
  tags: ['quotes'],
  security,
  querystring: Type.Object(
    {
      genre: Type.Array(Type.String({ [TEXT_KIND]: 'folded' }), {
        minItems: 1,
        maxItems: MAX_FILTER_VALUES,
        description: `Required. Genre, folded; repeat for any of several (at most ${MAX_FILTER_VALUES}).`,
        examples: [[EXAMPLE.genre]],
      }),
      page: pageParam,
      limit: limitParam(V1_DEFAULT_LIMIT),
      orderby: Type.Optional(
        Type.Union(
          V1_ORDER_FIELDS.map((f) => Type.Literal(f)),
          { default: 'author', examples: ['author'] },
        ),
      ),
      sort: direction('The direction: asc or desc (any case), default asc.', 'asc'),
    },
    { additionalProperties: false },
  ),
  response: {
    200: Type.Ref(V1ResponseSchema, {
      description: `One page of quotes. ${CACHE_HEADERS}`,
      headers: CACHE_RESPONSE_HEADERS,
    }),
    304: notModified,
    ...quoteErrors('No quote has the genre, or a page past the last'),
  },
};

export const healthSchema = {
  summary: 'Liveness',
  description: 'Answers while the process is up. No authentication, no rate limit.',
  tags: ['operations'],
  response: { 200: { ...HealthSchema, description: 'The process is up' } },
};

export const readySchema = {
  summary: 'Readiness',
  description:
    'Ready when the catalogue backend answers and holds a catalogue. No authentication, no rate limit.',
  tags: ['operations'],
  response: {
    200: { ...ReadySchema, description: 'A catalogue is open and answers' },
    503: errorRef('No catalogue is open yet, or its backend is unreachable (service_unavailable)', {
      'Cache-Control': Type.String({ description: 'no-store' }),
      'Retry-After': RETRY_AFTER_UNAVAILABLE,
    }),
  },
};

// ---- /quotes/facets -----------------------------------------------------------------------------

const facetValues = (field: string) =>
  Type.Optional(
    Type.Array(
      Type.Object(
        {
          value: Type.String({
            description: `The ${field} as written in the catalogue (the spelling of the lowest-id quote among those whose ${field} folds to it)`,
          }),
          count: Type.Integer({
            minimum: 1,
            description: `Matching quotes whose ${field} folds to this value`,
          }),
        },
        { additionalProperties: false },
      ),
      { maxItems: MAX_FACET_LIMIT, description: `Present when facet=${field} was asked` },
    ),
  );

export const FacetsResponseSchema = Type.Object(
  {
    total_quotes: Type.Integer({ minimum: 0, description: 'Quotes matching the filters' }),
    facets: Type.Object(
      {
        author: facetValues('author'),
        work: facetValues('work'),
        category: facetValues('category'),
        genre: facetValues('genre'),
        language: facetValues('language'),
      },
      {
        additionalProperties: false,
        description:
          'Per requested facet, at most `limit` values, most frequent first, then by folded value (Unicode code point order)',
      },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        total_quotes: 50,
        facets: {
          genre: [
            { value: 'romance', count: 50 },
            { value: 'comedy of manners', count: 18 },
          ],
        },
      },
    ],
  },
);

export const facetsSchema = {
  summary: 'Facet counts',
  description:
    'For each requested facet (author, work, category, genre, language), the values among the quotes matching the filters and `q` with their exact counts: ' +
    'most frequent first, then by folded value. Values compare as the filters do (folded: case, accents and spacing ignored; ' +
    'a quote counts once for each distinct genre it has), so `?genre=<value>` on /quotes lists exactly `count` quotes. ' +
    'Each value is shown as the lowest-id quote of the catalogue with that folded value spells it. Nothing matching is 200 with total_quotes 0 and empty lists.',
  tags: ['quotes'],
  security,
  querystring: Type.Object(
    {
      facet: Type.Array(Type.String({ pattern: listPattern(FACET_FIELDS), maxLength: MAX_VALUE_LENGTH }), {
        minItems: 1,
        description: `Required: ${FACET_FIELDS.join(', ')}; repeat it (or separate with commas) for several. Duplicates are ignored.`,
        examples: [['genre', 'category']],
      }),
      ...filterParams,
      ...rangeParams,
      q: searchParam,
      limit: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: MAX_FACET_LIMIT,
          default: DEFAULT_FACET_LIMIT,
          description: 'Values listed per facet',
          examples: [DEFAULT_FACET_LIMIT],
        }),
      ),
    },
    { additionalProperties: false },
  ),
  response: {
    200: {
      ...FacetsResponseSchema,
      description: `Facet counts. ${CACHE_HEADERS}`,
      headers: CACHE_RESPONSE_HEADERS,
    },
    304: notModified,
    ...quoteErrors('Never: a request matching nothing answers 200 with empty lists'),
  },
};

// ---- /authors and /works ------------------------------------------------------------------------

const authorProperties = {
  id: Type.Integer({ minimum: 1, description: 'The author_id of the quotes' }),
  name: Type.String({ description: "The author's name, as the quotes spell it" }),
  quote_count: Type.Integer({
    minimum: 1,
    description: 'Quotes of the author (in a list: only those matching the filters)',
  }),
};
const workProperties = {
  id: Type.Integer({ minimum: 1, description: 'The work_id of the quotes' }),
  title: Type.String({ description: 'The title, as the quotes spell it' }),
  author: quoteProperties.author,
  author_id: quoteProperties.author_id,
  publish_date: Type.String({ description: 'The publish_date of the lowest-id quote of the work' }),
  quote_count: Type.Integer({
    minimum: 1,
    description: 'Quotes of the work (in a list: only those matching the filters)',
  }),
};

const directoryPagination = (kind: 'authors' | 'works') =>
  Type.Object(
    {
      page: Type.Integer({ minimum: 1 }),
      limit: Type.Integer({ minimum: 1, maximum: MAX_LIMIT }),
      total_pages: Type.Integer({ minimum: 1 }),
      [`total_${kind}`]: Type.Integer({ minimum: 1, description: `${kind} with a matching quote` }),
    },
    { additionalProperties: false },
  );

export const AuthorsResponseSchema = Type.Object(
  {
    items: Type.Array(Type.Partial(Type.Object(authorProperties), { additionalProperties: false })),
    pagination: directoryPagination('authors'),
  },
  { $id: 'AuthorsResponse', additionalProperties: false },
);
export const WorksResponseSchema = Type.Object(
  {
    items: Type.Array(Type.Partial(Type.Object(workProperties), { additionalProperties: false })),
    pagination: directoryPagination('works'),
  },
  { $id: 'WorksResponse', additionalProperties: false },
);
export const AuthorSchema = Type.Object(
  {
    ...authorProperties,
    categories: Type.Array(Type.String(), {
      description: 'Distinct categories of its quotes (folded), most frequent first, then by folded value',
    }),
    works: Type.Array(
      Type.Object(
        {
          id: workProperties.id,
          title: workProperties.title,
          publish_date: workProperties.publish_date,
          quote_count: workProperties.quote_count,
        },
        { additionalProperties: false },
      ),
      { description: 'Every work of the author, by publish_date, then id' },
    ),
  },
  { $id: 'Author', additionalProperties: false },
);
export const WorkSchema = Type.Object(
  {
    ...workProperties,
    genres: Type.Array(Type.String(), {
      description: 'Distinct genres of its quotes (folded), most frequent first, then by folded value',
    }),
  },
  { $id: 'Work', additionalProperties: false },
);

const directoryParams = (kind: 'authors' | 'works') => {
  const sorts = kind === 'authors' ? ['name', 'quote_count', 'id'] : ['title', 'quote_count', 'id'];
  const fields = kind === 'authors' ? ['id', 'name', 'quote_count'] : Object.keys(workProperties);
  const like = kind === 'authors' ? 'name_like' : 'title_like';
  return {
    category: filterParams.category,
    genre: filterParams.genre,
    language: filterParams.language,
    [like]: text(
      'words',
      kind === 'authors' ? EXAMPLE.author_like : EXAMPLE.work_like,
      `Words that each begin some word of the ${kind === 'authors' ? 'name' : 'title'}, in any order.`,
    ),
    ...(kind === 'works'
      ? { author_id: ids(EXAMPLE.author_id, 'Author id: the works of these authors.') }
      : {}),
    sort: Type.Optional(
      Type.String({
        pattern: `^(?:${sorts.join('|')})$`,
        description: `${sorts.join(', ')}; default ${sorts[0]}. The ${sorts[0]} sorts in folded form by code point; ties by id ascending.`,
        examples: ['quote_count'],
      }),
    ),
    order: direction('asc or desc (any case), default asc', 'desc'),
    page: pageParam,
    limit: limitParam(DEFAULT_LIMIT),
    fields: Type.Optional(
      Type.String({
        pattern: listPattern(fields),
        maxLength: MAX_VALUE_LENGTH,
        description: `Comma-separated fields each item holds: ${fields.join(', ')}.`,
        examples: ['id,quote_count'],
      }),
    ),
  };
};

const directoryDescription = (kind: 'authors' | 'works') =>
  `The ${kind} having a quote that matches the filters (category, genre, language, words of the ${kind === 'authors' ? 'name' : 'title'}), ` +
  'each with the number of matching quotes; an exact total. Sorted by `sort` (ties by id ascending). Nothing matching, or a page past the last: 404.';

export const listAuthorsSchema = {
  summary: 'List authors',
  description: directoryDescription('authors'),
  tags: ['authors'],
  security,
  querystring: Type.Object(directoryParams('authors'), { additionalProperties: false }),
  response: {
    200: Type.Ref(AuthorsResponseSchema, {
      description: `One page of authors. ${CACHE_HEADERS}`,
      headers: CACHE_RESPONSE_HEADERS,
    }),
    304: notModified,
    ...quoteErrors('No author matches, or a page past the last'),
  },
};

export const listWorksSchema = {
  summary: 'List works',
  description: directoryDescription('works'),
  tags: ['authors'],
  security,
  querystring: Type.Object(directoryParams('works'), { additionalProperties: false }),
  response: {
    200: Type.Ref(WorksResponseSchema, {
      description: `One page of works. ${CACHE_HEADERS}`,
      headers: CACHE_RESPONSE_HEADERS,
    }),
    304: notModified,
    ...quoteErrors('No work matches, or a page past the last'),
  },
};

export const authorByIdSchema = {
  summary: 'One author with its works',
  tags: ['authors'],
  security,
  params: Type.Object({
    id: Type.Integer({ minimum: 1, description: 'author_id', examples: [EXAMPLE.author_id] }),
  }),
  querystring: Type.Object({}, { additionalProperties: false }),
  response: {
    200: Type.Ref(AuthorSchema, {
      description: `The author. ${CACHE_HEADERS}`,
      headers: CACHE_RESPONSE_HEADERS,
    }),
    304: notModified,
    ...quoteErrors('No author has this id'),
  },
};

export const workByIdSchema = {
  summary: 'One work',
  tags: ['authors'],
  security,
  params: Type.Object({
    id: Type.Integer({ minimum: 1, description: 'work_id', examples: [EXAMPLE.work_id] }),
  }),
  querystring: Type.Object({}, { additionalProperties: false }),
  response: {
    200: Type.Ref(WorkSchema, { description: `The work. ${CACHE_HEADERS}`, headers: CACHE_RESPONSE_HEADERS }),
    304: notModified,
    ...quoteErrors('No work has this id'),
  },
};

/** The schemas of /authors and /works referenced by `$id`, registered beside {@link SHARED_SCHEMAS}. */
export const DIRECTORY_SCHEMAS: readonly TSchema[] = [
  AuthorsResponseSchema,
  WorksResponseSchema,
  AuthorSchema,
  WorkSchema,
];
