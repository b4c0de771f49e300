/**
 * `GET /quotes/{id}` and `GET /quotes/random` over the real SQLite backend
 * (docs/api.md#one-quote-and-a-random-one).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Quote } from '../catalogue/port.ts';
import {
  buildFixtureCatalogue,
  errorOf,
  expected,
  type FixtureCatalogue,
  fixtureApp,
  get,
} from '../test-app.ts';
import { FIXTURE_QUOTES } from '../test-support/fixtures.ts';

let catalogue: FixtureCatalogue;
let app: FastifyInstance;

beforeAll(async () => {
  catalogue = await buildFixtureCatalogue();
  app = await fixtureApp(catalogue.path);
});
afterAll(async () => {
  await app?.close();
  catalogue?.remove();
});

const fixture = (id: number) => FIXTURE_QUOTES.find((q) => q.id === id) as Quote;

describe('GET /quotes/{id}', () => {
  it('returns the whole quote, not wrapped', async () => {
    const response = await get(app, '/quotes/97');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(fixture(97));
    expect(response.json()).toMatchObject({ id: 97, author: 'Emily Brontë', work: 'Wuthering Heights' });
    expect(response.headers['cache-control']).toBe('private, max-age=60');
    expect(response.headers.etag).toMatch(/^W\/".+"$/);
  });

  it('projects to fields, in Quote order', async () => {
    const response = await get(app, '/quotes/33?fields=quote_length,author,genre,author');
    expect(response.statusCode).toBe(200);
    const q = fixture(33);
    expect(response.body).toBe(
      JSON.stringify({ author: q.author, genre: q.genre, quote_length: q.quote_length }),
    );
  });

  it('answers 404 for an unknown id', async () => {
    // Beyond the safe integers is still an integer ≥ 1 (so no 400), one no quote can have.
    for (const id of [4, 999999, 9007199254740991, '9007199254740993', '99999999999999999999']) {
      const response = await get(app, `/quotes/${id}`);
      expect(response.statusCode).toBe(404);
      expect(errorOf(response)).toEqual({ code: 404, error: 'not_found', details: `No quote has id ${id}` });
      expect(response.headers.etag).toBeUndefined();
      expect(response.headers['cache-control']).toBe('no-store');
    }
  });

  it('answers 400 for an id that is not an integer ≥ 1', async () => {
    for (const id of ['abc', '0', '-1', '1.5', '1e3', '01', '%20', 'x'.repeat(99)]) {
      const response = await get(app, `/quotes/${id}`);
      expect(response.statusCode, id).toBe(400);
      const body = errorOf(response);
      expect(body.error).toBe('bad_request');
      expect(body.details).toMatch(/^id must be an integer ≥ 1( \(written without leading zeros\))?, got '/);
    }
  });

  it('accepts fields only', async () => {
    for (const query of ['author=x', 'sort=id', 'limit=1', 'page=1', 'order=asc']) {
      const response = await get(app, `/quotes/5?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(errorOf(response).details).toMatch(
        /is not accepted on \/quotes\/\{id\}; \/quotes\/\{id\} accepts fields$/,
      );
    }
    const unknown = await get(app, '/quotes/5?foo=1');
    expect(errorOf(unknown).details).toBe("unknown parameter 'foo'; /quotes/{id} accepts fields");
    const bad = await get(app, '/quotes/5?fields=id,nope');
    expect(errorOf(bad).details).toMatch(/^fields does not accept 'nope'/);
  });

  it('checks the id before the data: 400 for a bad id even where no quote exists', async () => {
    expect((await get(app, '/quotes/0?fields=id')).statusCode).toBe(400);
    expect((await get(app, '/quotes/4?fields=nope')).statusCode).toBe(400);
  });
});

describe('GET /quotes/random', () => {
  it('is routed before /quotes/{id} and returns one whole quote, never cached', async () => {
    const response = await get(app, '/quotes/random');
    expect(response.statusCode).toBe(200);
    const quote = response.json() as Quote;
    expect(quote).toEqual(fixture(quote.id));
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers.etag).toBeUndefined();
  });

  it('chooses uniformly among the quotes matching the filters', async () => {
    const matching = expected({ author: ['jane austen'], genre: ['romance'] }).map((q) => q.id);
    expect(matching).toEqual([5, 7, 19, 42, 88, 130]);
    const counts = new Map<number, number>();
    const draws = 600;
    for (let i = 0; i < draws; i++) {
      const response = await get(app, '/quotes/random?author=Jane+Austen&genre=ROMANCE&fields=id');
      const { id } = response.json() as { id: number };
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    expect([...counts.keys()].sort((a, b) => a - b)).toEqual(matching);
    // Each expected 100 times; below 50 is over five standard deviations away.
    for (const count of counts.values()) expect(count).toBeGreaterThan(50);
  });

  it('projects to fields', async () => {
    const response = await get(app, '/quotes/random?work_id=301&fields=work,id');
    const body = response.json() as { id: number; work: string };
    expect(Object.keys(body)).toEqual(['id', 'work']);
    expect([23, 97, 150]).toContain(body.id);
    expect(body.work).toBe('Wuthering Heights');
  });

  it('answers 404 when nothing matches', async () => {
    const response = await get(app, '/quotes/random?author_like=usten');
    expect(response.statusCode).toBe(404);
    expect(errorOf(response)).toEqual({
      code: 404,
      error: 'not_found',
      details: 'No quote matches the given filters',
    });
  });

  it('rejects sort, order, page and limit, and invalid filters', async () => {
    for (const name of ['sort', 'order', 'page', 'limit']) {
      const response = await get(app, `/quotes/random?${name}=1`);
      expect(response.statusCode).toBe(400);
      expect(errorOf(response).details).toMatch(new RegExp(`^${name} is not accepted on /quotes/random; `));
    }
    expect(errorOf(await get(app, '/quotes/random?author_id=x')).details).toBe(
      "author_id must be an integer ≥ 1, got 'x'",
    );
    expect(errorOf(await get(app, '/quotes/random?genre=')).details).toMatch(/^genre must not be empty/);
  });
});
