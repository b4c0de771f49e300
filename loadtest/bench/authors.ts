/**
 * Requests of authors for the benchmark: the list of the most quoted authors
 * (`/authors?sort=quote_count&order=desc`, every page size and the first pages, each distinct so
 * that none is answered from the service's cache of answers) and authors by id.
 */

/** Target of the feature: both kinds within this p99 at the benchmark's connections. */
export const AUTHORS_P99_MS = 50;

/** Connections of the authors runs: the feature's target is stated at this many. */
export const AUTHORS_CONNECTIONS = 10;

/**
 * Up to `count` distinct most-quoted-first list paths over a catalogue of `authors` authors: every
 * page size, each with its pages up to the last (the first 20 at most), shuffled by `random`.
 */
export function topAuthorPaths(random: () => number, count: number, authors: number): string[] {
  const paths: string[] = [];
  for (let limit = 1; limit <= 100; limit++) {
    const pages = Math.min(20, Math.ceil(authors / limit));
    for (let page = 1; page <= pages; page++) {
      paths.push(`/authors?sort=quote_count&order=desc&page=${page}&limit=${limit}`);
    }
  }
  shuffle(paths, random);
  return paths.slice(0, count);
}

/** `count` author paths by id, ids drawn uniformly in 1..authors (the generator numbers them so). */
export function authorByIdPaths(random: () => number, count: number, authors: number): string[] {
  return Array.from({ length: count }, () => `/authors/${1 + Math.floor(random() * authors)}`);
}

function shuffle(values: string[], random: () => number): void {
  for (let i = values.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [values[i], values[j]] = [values[j] as string, values[i] as string];
  }
}
