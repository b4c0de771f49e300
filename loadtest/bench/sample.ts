/**
 * The benchmark's request lists, drawn with the same mix as the k6 throughput script
 * (`loadtest/lib/mix.ts`) from a vocabulary sampled from the running service.
 */
import {
  distinctRequests,
  type MixKind,
  type Random,
  SAMPLE_FIELDS,
  samplePages,
  type Vocabulary,
  vocabularyFrom,
} from '../lib/mix.ts';

async function getJson(url: string, headers: Record<string, string>): Promise<unknown> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as unknown;
}

/** Samples `pages` pages of 100 quotes across the catalogue, as the k6 scripts' setup() does. */
export async function sampleVocabulary(
  baseUrl: string,
  headers: Record<string, string>,
  pages: number,
  random: Random,
): Promise<Vocabulary> {
  const top = (await getJson(`${baseUrl}/quotes?limit=1&sort=id&order=desc&fields=id`, headers)) as {
    items: { id: number }[];
    pagination: { total_quotes: number };
  };
  const total = top.pagination.total_quotes;
  const maxId = top.items[0]?.id ?? 0;
  const items: unknown[] = [];
  for (const page of samplePages(total, 100, pages, random)) {
    const body = (await getJson(
      `${baseUrl}/quotes?limit=100&page=${page}&fields=${SAMPLE_FIELDS}`,
      headers,
    )) as {
      items: unknown[];
    };
    items.push(...body.items);
  }
  return vocabularyFrom(total, maxId, items);
}

/** `count` distinct paths of the mix (or of one kind): no two requests of a run share a response. */
export function mixPaths(vocab: Vocabulary, random: Random, count: number, kind?: MixKind): string[] {
  return distinctRequests(vocab, random, count, kind).map((r) => r.path);
}

/** `count` by-id paths over the whole id range (or over the sampled ids when ids have gaps). */
export function idPaths(vocab: Vocabulary, random: Random, count: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = vocab.contiguousIds
      ? 1 + Math.floor(random() * vocab.total)
      : (vocab.samples[Math.floor(random() * vocab.samples.length)]?.id ?? 1);
    out.push(`/quotes/${id}`);
  }
  return out;
}
