/**
 * Prometheus metrics: a small registry (counters, gauges, histograms with labels) written in the
 * text exposition format 0.0.4, the service's metric set, and a Fastify plugin that records every
 * response and serves `GET /metrics`.
 *
 * Recording a response costs two Map lookups and two additions: label sets are resolved once,
 * into children that the hot path keeps.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

type LabelValues<L extends string> = { readonly [K in L]: string };

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** One label set of a counter. */
export class CounterChild {
  value = 0;
  inc(amount = 1): void {
    if (!(amount >= 0)) throw new RangeError(`a counter only goes up, got ${amount}`);
    this.value += amount;
  }
}

/** One label set of a gauge. */
export class GaugeChild {
  value = 0;
  set(value: number): void {
    this.value = value;
  }
  inc(amount = 1): void {
    this.value += amount;
  }
  dec(amount = 1): void {
    this.value -= amount;
  }
}

/** One label set of a histogram: per-bucket counts, made cumulative when written. */
export class HistogramChild {
  readonly bounds: readonly number[];
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(bounds: readonly number[]) {
    this.bounds = bounds;
    this.counts = new Float64Array(bounds.length);
  }
  observe(value: number): void {
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= (bounds[i] as number)) {
        this.counts[i] = (this.counts[i] ?? 0) + 1;
        break;
      }
    }
    this.sum += value;
    this.count++;
  }
}

interface Entry<C> {
  /** Rendered `a="x",b="y"` (empty without labels). */
  readonly labels: string;
  readonly child: C;
}

abstract class Metric<L extends string, C> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  protected readonly entries = new Map<string, Entry<C>>();

  constructor(name: string, help: string, labelNames: readonly L[]) {
    if (!METRIC_NAME.test(name)) throw new Error(`invalid metric name '${name}'`);
    for (const label of labelNames) {
      if (!LABEL_NAME.test(label) || label.startsWith('__')) {
        throw new Error(`invalid label name '${label}' on ${name}`);
      }
    }
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
  }

  abstract readonly type: 'counter' | 'gauge' | 'histogram';
  protected abstract newChild(): C;
  protected abstract writeSamples(out: string[], entry: Entry<C>): void;

  /** The child for one label set, created on first use. Keep it to record without lookups. */
  labels(values: LabelValues<L>): C {
    const key = this.key(values);
    let entry = this.entries.get(key);
    if (entry === undefined) {
      const rendered = this.labelNames.map((name) => `${name}="${escapeLabelValue(values[name])}"`).join(',');
      entry = { labels: rendered, child: this.newChild() };
      this.entries.set(key, entry);
    }
    return entry.child;
  }

  /** Forgets one label set (an info metric whose value changed). */
  remove(values: LabelValues<L>): void {
    this.entries.delete(this.key(values));
  }

  /** Forgets every label set. */
  reset(): void {
    this.entries.clear();
  }

  /** Appends this metric's lines in the text format. */
  write(out: string[]): void {
    out.push(`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`);
    for (const entry of this.entries.values()) this.writeSamples(out, entry);
  }

  private key(values: LabelValues<L>): string {
    let key = '';
    for (const name of this.labelNames) {
      const value = values[name];
      if (typeof value !== 'string') throw new Error(`label '${name}' of ${this.name} must be a string`);
      key += `${value}\u0000`;
    }
    return key;
  }
}

export class Counter<L extends string = never> extends Metric<L, CounterChild> {
  readonly type = 'counter';
  constructor(name: string, help: string, labelNames: readonly L[]) {
    super(name, help, labelNames);
    // A counter without labels is written as 0 from the start: `rate()` and `increase()` ignore
    // a series' first sample, so one that appeared only with its first event would lose it.
    if (labelNames.length === 0) this.labels({} as LabelValues<L>);
  }
  protected newChild(): CounterChild {
    return new CounterChild();
  }
  protected writeSamples(out: string[], { labels, child }: Entry<CounterChild>): void {
    out.push(`${this.name}${braces(labels)} ${formatNumber(child.value)}`);
  }
  /** Increments the counter without labels. */
  inc(amount = 1): void {
    this.labels({} as LabelValues<L>).inc(amount);
  }
}

export class Gauge<L extends string = never> extends Metric<L, GaugeChild> {
  readonly type = 'gauge';
  readonly #collect: ((gauge: Gauge<L>) => void) | undefined;
  constructor(name: string, help: string, labelNames: readonly L[], collect?: (gauge: Gauge<L>) => void) {
    super(name, help, labelNames);
    this.#collect = collect;
  }
  protected newChild(): GaugeChild {
    return new GaugeChild();
  }
  protected writeSamples(out: string[], { labels, child }: Entry<GaugeChild>): void {
    out.push(`${this.name}${braces(labels)} ${formatNumber(child.value)}`);
  }
  override write(out: string[]): void {
    this.#collect?.(this);
    super.write(out);
  }
  /** Sets the gauge without labels. */
  set(value: number): void {
    this.labels({} as LabelValues<L>).set(value);
  }
}

export class Histogram<L extends string = never> extends Metric<L, HistogramChild> {
  readonly type = 'histogram';
  readonly bounds: readonly number[];
  constructor(name: string, help: string, labelNames: readonly L[], bounds: readonly number[]) {
    super(name, help, labelNames);
    if ((labelNames as readonly string[]).includes('le')) throw new Error(`'le' is reserved on ${name}`);
    const sorted = bounds.every((b, i) => Number.isFinite(b) && (i === 0 || b > (bounds[i - 1] as number)));
    if (bounds.length === 0 || !sorted) throw new Error(`buckets of ${name} must be finite and increasing`);
    this.bounds = [...bounds];
  }
  protected newChild(): HistogramChild {
    return new HistogramChild(this.bounds);
  }
  protected writeSamples(out: string[], { labels, child }: Entry<HistogramChild>): void {
    const prefix = labels === '' ? '' : `${labels},`;
    let cumulative = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += child.counts[i] as number;
      const le = formatNumber(this.bounds[i] as number);
      out.push(`${this.name}_bucket{${prefix}le="${le}"} ${formatNumber(cumulative)}`);
    }
    out.push(`${this.name}_bucket{${prefix}le="+Inf"} ${formatNumber(child.count)}`);
    out.push(`${this.name}_sum${braces(labels)} ${formatNumber(child.sum)}`);
    out.push(`${this.name}_count${braces(labels)} ${formatNumber(child.count)}`);
  }
  /** Observes a value without labels. */
  observe(value: number): void {
    this.labels({} as LabelValues<L>).observe(value);
  }
}

/** What the registry needs of a metric. */
interface Writable {
  readonly name: string;
  write(out: string[]): void;
}

/** A set of metrics with unique names, written together. */
export class Registry {
  readonly #metrics = new Map<string, Writable>();

  counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return this.#add(new Counter<L>(name, help, labelNames));
  }

  gauge<L extends string = never>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
    collect?: (gauge: Gauge<L>) => void,
  ): Gauge<L> {
    return this.#add(new Gauge<L>(name, help, labelNames, collect));
  }

  histogram<L extends string = never>(
    name: string,
    help: string,
    labelNames: readonly L[],
    bounds: readonly number[],
  ): Histogram<L> {
    return this.#add(new Histogram<L>(name, help, labelNames, bounds));
  }

  /** Every metric in the text exposition format 0.0.4. */
  expose(): string {
    const out: string[] = [];
    for (const metric of this.#metrics.values()) metric.write(out);
    return `${out.join('\n')}\n`;
  }

  #add<M extends Writable>(metric: M): M {
    if (this.#metrics.has(metric.name)) throw new Error(`metric ${metric.name} is already registered`);
    this.#metrics.set(metric.name, metric);
    return metric;
  }
}

/** Upper bounds (seconds) of the request duration buckets: sub-millisecond to 10 s. */
export const DURATION_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** The service's metrics. One instance per app; the app sets the catalogue gauges. */
export interface ServiceMetrics {
  readonly registry: Registry;
  readonly httpRequests: Counter<'route' | 'method' | 'status'>;
  readonly httpDuration: Histogram<'route' | 'method' | 'status'>;
  readonly rateLimitRejections: Counter;
  readonly rateLimitStoreFailures: Counter;
  readonly rateLimitEvictions: Counter;
  /** 1 while the rate-limit store answers; set by the rate-limit plugin. */
  readonly rateLimitStoreUp: Gauge;
  readonly catalogueDocuments: Gauge;
  readonly catalogueInfo: Gauge<'version' | 'backend'>;
  /** Process gauges under their conventional names, so memory drift shows in any dashboard. */
  readonly processResidentMemory: Gauge;
  readonly processHeapUsed: Gauge;
  readonly processHeapTotal: Gauge;
  readonly processExternal: Gauge;
  /** Publishes the catalogue now served; cheap when nothing changed, so callers need not check. */
  setCatalogue(info: { version: string; backend: string; documents: number }): void;
}

export function createMetrics(): ServiceMetrics {
  const registry = new Registry();
  const labels = ['route', 'method', 'status'] as const;
  const catalogueInfo = registry.gauge(
    'quotes_catalogue_info',
    'Catalogue being served: index version and search backend (value is always 1).',
    ['version', 'backend'],
  );
  const catalogueDocuments = registry.gauge(
    'quotes_catalogue_documents',
    'Quotes in the catalogue being served.',
  );
  let shown = { version: '', backend: '' };
  return {
    registry,
    httpRequests: registry.counter(
      'quotes_http_requests_total',
      'HTTP responses by route pattern ("unmatched" for unknown paths), method and status.',
      labels,
    ),
    httpDuration: registry.histogram(
      'quotes_http_request_duration_seconds',
      'Time from receiving a request to finishing its response, in seconds.',
      labels,
      DURATION_BUCKETS,
    ),
    rateLimitRejections: registry.counter(
      'quotes_ratelimit_rejections_total',
      'Requests answered 429 because the client exceeded its per-minute limit.',
    ),
    rateLimitStoreFailures: registry.counter(
      'quotes_ratelimit_store_failures_total',
      'Requests the rate-limit store could not count (Redis unreachable, slow or failing).',
    ),
    rateLimitEvictions: registry.counter(
      'quotes_ratelimit_evictions_total',
      'Clients forgotten by the in-memory store because it reached its cap within one minute.',
    ),
    rateLimitStoreUp: registry.gauge(
      'quotes_ratelimit_store_up',
      'Whether the rate-limit store answered its last request or check (1) or not (0).',
    ),
    catalogueDocuments,
    catalogueInfo,
    processResidentMemory: registry.gauge('process_resident_memory_bytes', 'Resident memory size in bytes.'),
    processHeapUsed: registry.gauge('nodejs_heap_size_used_bytes', 'V8 heap in use, in bytes.'),
    processHeapTotal: registry.gauge('nodejs_heap_size_total_bytes', 'V8 heap reserved, in bytes.'),
    processExternal: registry.gauge(
      'nodejs_external_memory_bytes',
      'Memory held outside the V8 heap by JavaScript objects (buffers, typed arrays), in bytes.',
    ),
    setCatalogue({ version, backend, documents }) {
      catalogueDocuments.set(documents);
      if (version === shown.version && backend === shown.backend) return;
      shown = { version, backend };
      catalogueInfo.reset();
      catalogueInfo.labels({ version, backend }).set(1);
    },
  };
}

/** Label value escaping of the text format: backslash, double quote and line feed. */
export function escapeLabelValue(value: string): string {
  return /[\\"\n]/.test(value)
    ? value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
    : value;
}

/** HELP text escaping of the text format: backslash and line feed. */
export function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** A sample value as the text format writes it (Go float syntax: +Inf, -Inf, NaN). */
export function formatNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

function braces(labels: string): string {
  return labels === '' ? '' : `{${labels}}`;
}

type Recorder = (method: string, status: number, elapsedMs: number) => void;

/** Records the responses of one route pattern; label children are resolved once per method+status. */
function recorderFor(metrics: ServiceMetrics, route: string): Recorder {
  const children = new Map<string, { count: CounterChild; duration: HistogramChild }>();
  return (method, status, elapsedMs) => {
    const key = method + status;
    let child = children.get(key);
    if (child === undefined) {
      const labels = { route, method, status: String(status) };
      child = { count: metrics.httpRequests.labels(labels), duration: metrics.httpDuration.labels(labels) };
      children.set(key, child);
    }
    child.count.inc();
    child.duration.observe(elapsedMs / 1000);
  };
}

/**
 * Records `quotes_http_requests_total` and `quotes_http_request_duration_seconds` for one finished
 * response. The route label is the route pattern (`/quotes/:id`), or "unmatched" for requests no
 * route matched (unknown paths, and 405s answered by a not-found handler), so its values stay as
 * few as the routes. Reading the pattern (`request.routeOptions`) costs about 50 ns.
 */
export function responseRecorder(
  metrics: ServiceMetrics,
): (request: FastifyRequest, reply: FastifyReply) => void {
  const unmatched = recorderFor(metrics, 'unmatched');
  const byRoute = new Map<string, Recorder>();
  const recorderOf = (request: FastifyRequest): Recorder => {
    const route = request.is404 ? undefined : request.routeOptions.url;
    if (route === undefined) return unmatched;
    let record = byRoute.get(route);
    if (record === undefined) {
      record = recorderFor(metrics, route);
      byRoute.set(route, record);
    }
    return record;
  };
  return (request, reply) => recorderOf(request)(request.method, reply.statusCode, reply.elapsedTime);
}

/**
 * Records a response written on a raw socket, before any routing: malformed HTTP, a request that
 * did not arrive in time, CONNECT, an unknown method. Route `unparsed`, method `CONNECT` or
 * `OTHER` (a method token Node does not know is the client's to choose, so it is no label); only
 * the counter, since no request start is known to time them from.
 */
export function rawAnswerRecorder(metrics: ServiceMetrics): (method: string, status: number) => void {
  return (method, status) =>
    metrics.httpRequests.labels({ route: 'unparsed', method, status: String(status) }).inc();
}

export interface MetricsPluginOptions {
  metrics: ServiceMetrics;
  /** Where the metrics are served; default `/metrics`. */
  path?: string;
  /**
   * Runs before each scrape, to refresh gauges read from elsewhere (the catalogue's version and
   * size). A failure is logged and the scrape still answers, with the previous values.
   */
  beforeScrape?: () => Promise<void> | void;
  /**
   * Whether the plugin records responses with an `onResponse` hook (default true). An app that
   * already observes every finished request can record them itself with {@link responseRecorder}
   * and spare each request a hook: the service does so in its log controller (request-log.ts).
   */
  recordResponses?: boolean;
}

/**
 * Serves the registry at `path`, and records every response (see {@link responseRecorder}).
 *
 * One app-level hook, which Fastify applies to every route whenever it was declared; a
 * route-level hook added in `onRoute` would silently miss the routes declared before this plugin.
 */
async function registerMetrics(app: FastifyInstance, options: MetricsPluginOptions): Promise<void> {
  const { metrics } = options;
  if (options.recordResponses ?? true) {
    const record = responseRecorder(metrics);
    app.addHook('onResponse', (request, reply, done) => {
      record(request, reply);
      done();
    });
  }
  // Scrapes come every few seconds: a failure is logged when it appears or changes, not each time.
  let failing: string | null = null;
  app.get(options.path ?? '/metrics', async (request, reply) => {
    try {
      await options.beforeScrape?.();
      if (failing !== null) request.log.info({ after: failing }, 'metrics: gauges refreshed again');
      failing = null;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      if (reason !== failing) {
        request.log.warn(
          { reason },
          'metrics: refreshing gauges before the scrape failed; previous values kept',
        );
      }
      failing = reason;
    }
    const memory = process.memoryUsage();
    metrics.processResidentMemory.set(memory.rss);
    metrics.processHeapUsed.set(memory.heapUsed);
    metrics.processHeapTotal.set(memory.heapTotal);
    metrics.processExternal.set(memory.external);
    reply.header('content-type', CONTENT_TYPE);
    return metrics.registry.expose();
  });
}

/** The metrics plugin (see {@link MetricsPluginOptions}); not encapsulated, so it sees every route. */
export const metricsPlugin = fp(registerMetrics, { name: 'quotes-metrics', fastify: '5.x' });
