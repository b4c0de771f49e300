/**
 * Full-text search paths for the benchmark: `q` of 1 to 3 words, each a run of consecutive words
 * of a quote of the catalogue (so that it finds at least that quote), the last one cut to a
 * prefix now and then, as typed. Every path is distinct: the service keeps answers asked for
 * twice, and a repeated search would measure that cache.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { words } from '../../service/catalogue/port.ts';
import type { Random } from '../lib/mix.ts';
import type { LoadResult } from './load.ts';

/** Quotes read from the start of the catalogue file, for their words. */
const SAMPLE_QUOTES = 20_000;

/** The words of the first quotes of an NDJSON catalogue, one list per quote. */
async function sampleTexts(file: string): Promise<string[][]> {
  const input = createReadStream(file, 'utf8');
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  const texts: string[][] = [];
  for await (const line of lines) {
    if (line.trim() === '') continue;
    const own = words((JSON.parse(line) as { quote: string }).quote);
    if (own.length > 0) texts.push(own);
    if (texts.length >= SAMPLE_QUOTES) break;
  }
  lines.close();
  // Stopping early leaves the file open: close it now, not at garbage collection.
  input.destroy();
  return texts;
}

/** What the benchmark measures of `q`: the same kind of searches at 10 connections and at the run's. */
export interface SearchResults {
  /** Distinct paths drawn; each run takes its own share, none repeats. */
  paths: number;
  at10: LoadResult;
  atConnections: LoadResult;
  /** Meilisearch only: the engine requests the service sent for them, replayed straight at it. */
  replay?: LoadResult;
  requestsPerAnswer?: number;
}

/** `count` distinct `/quotes?q=…` paths (fewer if the sample cannot make that many). */
export async function searchPaths(file: string, random: Random, count: number): Promise<string[]> {
  const texts = await sampleTexts(file);
  if (texts.length === 0) throw new Error(`no quote text in ${file}`);
  return searchPathsFrom(texts, random, count);
}

/** {@link searchPaths} from the words of quotes at hand, one non-empty list per quote. */
export function searchPathsFrom(texts: readonly string[][], random: Random, count: number): string[] {
  const out = new Set<string>();
  for (let tries = 0; out.size < count && tries < count * 20; tries++) {
    const text = texts[Math.floor(random() * texts.length)] as string[];
    const size = 1 + Math.floor(random() * 3);
    const at = Math.floor(random() * Math.max(1, text.length - size + 1));
    const picked = text.slice(at, at + size);
    const last = picked.length - 1;
    const typed = Array.from(picked[last] as string);
    // One search in three is still being typed: its last word cut to 2 characters or more.
    if (typed.length > 3 && random() < 1 / 3) {
      picked[last] = typed.slice(0, 2 + Math.floor(random() * (typed.length - 2))).join('');
    }
    out.add(`/quotes?q=${picked.map(encodeURIComponent).join('+')}`);
  }
  return [...out];
}
