import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { CONTENT_TYPE, createMetrics, DURATION_BUCKETS, metricsPlugin, Registry } from './metrics.ts';

describe('Registry exposition (text format 0.0.4)', () => {
  it('writes HELP, TYPE and one sample per label set, escaping label values and help text', () => {
    const registry = new Registry();
    const requests = registry.counter('app_requests_total', 'Requests by path.\nSecond line \\ backslash', [
      'path',
    ]);
    requests.labels({ path: '/a' }).inc();
    requests.labels({ path: '/a' }).inc(2);
    requests.labels({ path: 'quote " back\\slash \n newline' }).inc();
    registry.gauge('app_temperature', 'A gauge without labels.').set(-1.5);

    expect(registry.expose()).toBe(
      [
        '# HELP app_requests_total Requests by path.\\nSecond line \\\\ backslash',
        '# TYPE app_requests_total counter',
        'app_requests_total{path="/a"} 3',
        'app_requests_total{path="quote \\" back\\\\slash \\n newline"} 1',
        '# HELP app_temperature A gauge without labels.',
        '# TYPE app_temperature gauge',
        'app_temperature -1.5',
        '',
      ].join('\n'),
    );
  });

  it('writes a counter without labels from the start, at 0', () => {
    const registry = new Registry();
    registry.counter('app_failures_total', 'Failures.');
    registry.counter('app_requests_total', 'Requests by path.', ['path']);
    expect(registry.expose()).toBe(
      [
        '# HELP app_failures_total Failures.',
        '# TYPE app_failures_total counter',
        'app_failures_total 0',
        '# HELP app_requests_total Requests by path.',
        '# TYPE app_requests_total counter',
        '',
      ].join('\n'),
    );
  });

  it('writes histograms as cumulative buckets with +Inf, _sum and _count', () => {
    const registry = new Registry();
    const latency = registry.histogram('app_seconds', 'Latency.', ['route'], [0.1, 1]);
    const child = latency.labels({ route: '/q' });
    for (const value of [0.05, 0.1, 0.5, 3]) child.observe(value);

    expect(registry.expose()).toBe(
      [
        '# HELP app_seconds Latency.',
        '# TYPE app_seconds histogram',
        'app_seconds_bucket{route="/q",le="0.1"} 2',
        'app_seconds_bucket{route="/q",le="1"} 3',
        'app_seconds_bucket{route="/q",le="+Inf"} 4',
        'app_seconds_sum{route="/q"} 3.65',
        'app_seconds_count{route="/q"} 4',
        '',
      ].join('\n'),
    );
  });

  it('writes special values in Go float syntax and runs collect callbacks before writing', () => {
    const registry = new Registry();
    let collected = 0;
    registry.gauge('app_inf', 'Infinite.').set(Number.POSITIVE_INFINITY);
    registry.gauge('app_nan', 'Not a number.').set(Number.NaN);
    registry.gauge('app_collected', 'Set when collected.', [], (gauge) => gauge.set(++collected));
    const text = registry.expose();
    expect(text).toContain('\napp_inf +Inf\n');
    expect(text).toContain('\napp_nan NaN\n');
    expect(text).toContain('\napp_collected 1\n');
    expect(registry.expose()).toContain('\napp_collected 2\n');
  });

  it('rejects invalid names, duplicates, reserved labels and decreasing counters', () => {
    const registry = new Registry();
    registry.counter('app_total', 'Once.');
    expect(() => registry.counter('app_total', 'Twice.')).toThrow('metric app_total is already registered');
    expect(() => registry.counter('app-total', 'Dash.')).toThrow("invalid metric name 'app-total'");
    expect(() => registry.counter('app_x', 'Bad label.', ['bad-label'])).toThrow(
      "invalid label name 'bad-label'",
    );
    expect(() => registry.histogram('app_h', 'Le.', ['le'], [1])).toThrow("'le' is reserved on app_h");
    expect(() => registry.histogram('app_h2', 'Order.', [], [1, 1])).toThrow('finite and increasing');
    expect(() => registry.counter('app_c', 'Down.').inc(-1)).toThrow('a counter only goes up, got -1');
  });
});

describe('service metrics', () => {
  it('publishes the catalogue, replacing the previous version', () => {
    const metrics = createMetrics();
    metrics.setCatalogue({ version: 'v1', backend: 'sqlite', documents: 10 });
    metrics.setCatalogue({ version: 'v2', backend: 'sqlite', documents: 12 });
    const text = metrics.registry.expose();
    expect(text).toContain('\nquotes_catalogue_info{version="v2",backend="sqlite"} 1\n');
    expect(text).not.toContain('version="v1"');
    expect(text).toContain('\nquotes_catalogue_documents 12\n');
  });
});

describe('metrics plugin', () => {
  let app: FastifyInstance;
  afterEach(async () => {
    await app.close();
  });

  it('logs a failing refresh once per cause, without a stack, and still answers', async () => {
    const metrics = createMetrics();
    const lines: string[] = [];
    app = Fastify({ logger: { level: 'info', stream: { write: (line: string) => void lines.push(line) } } });
    let failure: string | null = 'catalogue unreachable';
    await app.register(metricsPlugin, {
      metrics,
      recordResponses: false,
      beforeScrape: () => {
        if (failure !== null) throw new Error(failure);
      },
    });
    await app.ready();
    for (let i = 0; i < 3; i++) expect((await app.inject('/metrics')).statusCode).toBe(200);
    failure = 'another cause';
    await app.inject('/metrics');
    failure = null;
    await app.inject('/metrics');
    await app.inject('/metrics');
    const said = lines
      .map((line) => JSON.parse(line) as { level: number; msg: string; reason?: string; after?: string })
      .filter((line) => line.msg.startsWith('metrics:'))
      .map((line) => [line.level, line.reason ?? line.after]);
    expect(said).toEqual([
      [40, 'catalogue unreachable'],
      [40, 'another cause'],
      [30, 'another cause'],
    ]);
    expect(lines.join('')).not.toContain('"stack"');
  });

  it('records every response by route pattern, method and status, and serves /metrics', async () => {
    const metrics = createMetrics();
    app = Fastify();
    // Routes declared before the plugin are recorded too.
    await app.register(async (scope) => {
      scope.get<{ Params: { id: string } }>('/quotes/:id', async (request, reply) =>
        request.params.id === '1' ? { id: '1' } : reply.code(404).send({ code: 404 }),
      );
    });
    let scrapes = 0;
    await app.register(metricsPlugin, {
      metrics,
      beforeScrape: () =>
        metrics.setCatalogue({ version: `v${++scrapes}`, backend: 'sqlite', documents: 415 }),
    });
    await app.ready();

    await app.inject('/quotes/1');
    await app.inject('/quotes/2');
    await app.inject('/quotes/3');
    await app.inject({ method: 'HEAD', url: '/quotes/1' });
    await app.inject('/nowhere');
    const response = await app.inject('/metrics');

    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe(CONTENT_TYPE);
    const samples = response.body
      .split('\n')
      .filter((line) => line.startsWith('quotes_http_requests_total{'));
    expect(samples).toEqual([
      'quotes_http_requests_total{route="/quotes/:id",method="GET",status="200"} 1',
      'quotes_http_requests_total{route="/quotes/:id",method="GET",status="404"} 2',
      'quotes_http_requests_total{route="/quotes/:id",method="HEAD",status="200"} 1',
      'quotes_http_requests_total{route="unmatched",method="GET",status="404"} 1',
    ]);
    const durationCounts = response.body
      .split('\n')
      .filter((line) => line.startsWith('quotes_http_request_duration_seconds_count{'));
    expect(durationCounts).toContain(
      'quotes_http_request_duration_seconds_count{route="/quotes/:id",method="GET",status="404"} 2',
    );
    const bucketLines = response.body
      .split('\n')
      .filter((line) => line.startsWith('quotes_http_request_duration_seconds_bucket{route="unmatched"'));
    expect(bucketLines).toHaveLength(DURATION_BUCKETS.length + 1);
    expect(response.body).toContain('\nquotes_catalogue_info{version="v1",backend="sqlite"} 1\n');
    expect(response.body).toContain('\nquotes_catalogue_documents 415\n');
    // Resident memory of this very process: positive and within a factor of the live reading.
    const rss = Number(/\nprocess_resident_memory_bytes (\d+)\n/.exec(response.body)?.[1]);
    expect(rss).toBeGreaterThan(process.memoryUsage.rss() / 4);
    expect(rss).toBeLessThan(process.memoryUsage.rss() * 4);
    // The V8 heap in use fits in the heap reserved, and both in the resident memory.
    const gauge = (name: string) => Number(new RegExp(`\n${name} (\\d+)\n`).exec(response.body)?.[1]);
    expect(gauge('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(gauge('nodejs_heap_size_used_bytes')).toBeLessThanOrEqual(gauge('nodejs_heap_size_total_bytes'));
    expect(gauge('nodejs_heap_size_total_bytes')).toBeLessThan(rss);
    expect(gauge('nodejs_external_memory_bytes')).toBeGreaterThan(0);
    // The /metrics response itself is recorded once it has been sent; each scrape refreshes.
    const second = (await app.inject('/metrics')).body;
    expect(second).toContain('quotes_http_requests_total{route="/metrics",method="GET",status="200"} 1\n');
    expect(second).toContain('\nquotes_catalogue_info{version="v2",backend="sqlite"} 1\n');
    expect(second).not.toContain('version="v1"');
  });
});
