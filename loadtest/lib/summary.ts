/**
 * End-of-test summaries for the k6 scripts, written by each script's `handleSummary`: a text
 * summary on stdout, and `<RESULTS_DIR>/<script>.json` and `<RESULTS_DIR>/<script>.md`.
 *
 * Rendered here rather than with jslib's textSummary, which is a remote import: the scripts run
 * offline and inside the k6 container without fetching code.
 */

/** One metric of k6's summary data. */
export interface SummaryMetric {
  type: 'counter' | 'gauge' | 'rate' | 'trend';
  contains: 'default' | 'time' | 'data';
  values: Record<string, number>;
  thresholds?: Record<string, { ok: boolean }>;
}

/** One check of k6's summary data. */
export interface SummaryCheck {
  name: string;
  path: string;
  passes: number;
  fails: number;
}

/** A group of k6's summary data (the root group holds the top-level checks). */
export interface SummaryGroup {
  name: string;
  path: string;
  groups?: SummaryGroup[] | Record<string, SummaryGroup>;
  checks?: SummaryCheck[] | Record<string, SummaryCheck>;
}

/** The argument k6 passes to `handleSummary` (the fields this module reads). */
export interface SummaryData {
  metrics: Record<string, SummaryMetric>;
  root_group: SummaryGroup;
  state?: { testRunDurationMs?: number };
}

/** What a script adds to its summary. */
export interface SummaryContext {
  /** Script name: also the file name of the JSON and markdown outputs. */
  script: string;
  /** One line saying what the script verified. */
  title: string;
  /** Settings worth recording next to the numbers (rate, duration, target...). */
  settings: Record<string, string | number>;
  /** Derived results (drift, memory) as label → text. */
  findings?: Record<string, string>;
  /** Directory of the JSON and markdown outputs. */
  dir: string;
}

/** A threshold outcome. */
export interface ThresholdResult {
  metric: string;
  expression: string;
  ok: boolean;
}

/** A check outcome, flattened across groups. */
export interface CheckResult {
  name: string;
  passes: number;
  fails: number;
}

// Sub-timings of http_req_duration: in the JSON, left out of the human-readable outputs.
const QUIET = new Set([
  'http_req_blocked',
  'http_req_connecting',
  'http_req_tls_handshaking',
  'http_req_sending',
  'http_req_waiting',
  'http_req_receiving',
  'data_sent',
  'data_received',
  'iteration_duration',
]);

function list<T>(value: T[] | Record<string, T> | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : Object.values(value);
}

/** Every threshold of the run with its outcome. */
export function thresholds(data: SummaryData): ThresholdResult[] {
  const out: ThresholdResult[] = [];
  for (const metric of Object.keys(data.metrics).sort()) {
    const m = data.metrics[metric];
    for (const [expression, result] of Object.entries(m?.thresholds ?? {})) {
      out.push({ metric, expression, ok: result.ok });
    }
  }
  return out;
}

/** Every check of the run, groups included, with passes and fails summed by name. */
export function checks(data: SummaryData): CheckResult[] {
  const byName = new Map<string, CheckResult>();
  const visit = (group: SummaryGroup, prefix: string) => {
    for (const c of list(group.checks)) {
      const name = prefix + c.name;
      const seen = byName.get(name) ?? { name, passes: 0, fails: 0 };
      seen.passes += c.passes;
      seen.fails += c.fails;
      byName.set(name, seen);
    }
    for (const g of list(group.groups)) visit(g, `${prefix}${g.name} › `);
  };
  visit(data.root_group, '');
  return [...byName.values()];
}

function number(value: number): string {
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 100 ? value.toFixed(1) : value.toFixed(2);
}

/** A metric value in its unit: milliseconds for time, bytes for data, percent for rates. */
export function formatValue(metric: SummaryMetric, stat: string, value: number): string {
  if (metric.type === 'rate' && stat === 'rate') return `${(value * 100).toFixed(2)}%`;
  if (metric.type === 'counter' && stat === 'rate') return `${number(value)}/s`;
  if (metric.contains === 'time' && stat !== 'count') return `${number(value)} ms`;
  if (metric.contains === 'data' && stat !== 'rate') {
    if (value >= 1024 * 1024) return `${(value / 1024 / 1024).toFixed(1)} MiB`;
    if (value >= 1024) return `${(value / 1024).toFixed(1)} KiB`;
    return `${value} B`;
  }
  return number(value);
}

function statsOf(metric: SummaryMetric): string {
  return Object.entries(metric.values)
    .map(([stat, value]) => `${stat}=${formatValue(metric, stat, value)}`)
    .join(' ');
}

function shownMetrics(data: SummaryData): [string, SummaryMetric][] {
  return Object.keys(data.metrics)
    .sort()
    .filter((name) => !QUIET.has(name) || data.metrics[name]?.thresholds !== undefined)
    .map((name) => [name, data.metrics[name] as SummaryMetric]);
}

/** True when every threshold held (k6 then exits 0). */
export function passed(data: SummaryData): boolean {
  return thresholds(data).every((t) => t.ok);
}

/** The human-readable summary printed on stdout. */
export function textSummary(data: SummaryData, context: SummaryContext): string {
  const lines: string[] = [];
  const seconds = (data.state?.testRunDurationMs ?? 0) / 1000;
  lines.push(`${context.script}: ${context.title}`);
  lines.push(`  result: ${passed(data) ? 'PASS' : 'FAIL'} (run ${seconds.toFixed(1)} s)`);
  for (const [key, value] of Object.entries(context.settings)) lines.push(`  ${key}: ${value}`);
  const ths = thresholds(data);
  if (ths.length > 0) {
    lines.push('', '  thresholds');
    for (const t of ths) lines.push(`    ${t.ok ? '✓' : '✗'} ${t.metric} ${t.expression}`);
  }
  const cs = checks(data);
  if (cs.length > 0) {
    lines.push('', '  checks');
    for (const c of cs) {
      const total = c.passes + c.fails;
      const share = total === 0 ? 0 : (c.passes / total) * 100;
      lines.push(`    ${c.fails === 0 ? '✓' : '✗'} ${c.name}: ${share.toFixed(2)}% (${c.passes}/${total})`);
    }
  }
  const findings = Object.entries(context.findings ?? {});
  if (findings.length > 0) {
    lines.push('', '  findings');
    for (const [label, text] of findings) lines.push(`    ${label}: ${text}`);
  }
  lines.push('', '  metrics');
  for (const [name, metric] of shownMetrics(data)) lines.push(`    ${name}: ${statsOf(metric)}`);
  return `${lines.join('\n')}\n\n`;
}

function cell(text: string | number): string {
  return String(text).replace(/\|/g, '\\|');
}

/** The markdown summary written to `<dir>/<script>.md`. */
export function markdownSummary(data: SummaryData, context: SummaryContext, date: string): string {
  const out: string[] = [];
  out.push(`# k6 ${context.script}: ${passed(data) ? 'PASS' : 'FAIL'}`, '', context.title, '');
  out.push('| setting | value |', '| --- | --- |');
  out.push(`| date | ${date} |`);
  out.push(`| run duration | ${((data.state?.testRunDurationMs ?? 0) / 1000).toFixed(1)} s |`);
  for (const [key, value] of Object.entries(context.settings)) out.push(`| ${cell(key)} | ${cell(value)} |`);
  const ths = thresholds(data);
  if (ths.length > 0) {
    out.push('', '## Thresholds', '', '| metric | threshold | result |', '| --- | --- | --- |');
    for (const t of ths)
      out.push(`| ${cell(t.metric)} | \`${cell(t.expression)}\` | ${t.ok ? 'pass' : 'FAIL'} |`);
  }
  const cs = checks(data);
  if (cs.length > 0) {
    out.push('', '## Checks', '', '| check | passes | fails |', '| --- | --- | --- |');
    for (const c of cs) out.push(`| ${cell(c.name)} | ${c.passes} | ${c.fails} |`);
  }
  const findings = Object.entries(context.findings ?? {});
  if (findings.length > 0) {
    out.push('', '## Findings', '', '| finding | value |', '| --- | --- |');
    for (const [label, text] of findings) out.push(`| ${cell(label)} | ${cell(text)} |`);
  }
  out.push('', '## Metrics', '', '| metric | values |', '| --- | --- |');
  for (const [name, metric] of shownMetrics(data)) out.push(`| ${cell(name)} | ${cell(statsOf(metric))} |`);
  return `${out.join('\n')}\n`;
}

/**
 * The object a script's `handleSummary` returns: stdout text plus the JSON and markdown files.
 * The JSON keeps k6's full metrics next to the outcome, for tooling and for comparing runs.
 */
export function summaryOutputs(data: SummaryData, context: SummaryContext): Record<string, string> {
  const date = new Date().toISOString();
  const report = {
    script: context.script,
    title: context.title,
    date,
    passed: passed(data),
    settings: context.settings,
    findings: context.findings ?? {},
    thresholds: thresholds(data),
    checks: checks(data),
    runDurationMs: data.state?.testRunDurationMs ?? null,
    metrics: data.metrics,
  };
  return {
    stdout: textSummary(data, context),
    [`${context.dir}/${context.script}.json`]: `${JSON.stringify(report, null, 2)}\n`,
    [`${context.dir}/${context.script}.md`]: markdownSummary(data, context, date),
  };
}

/**
 * A statistic of a metric from the summary data, or undefined when the metric has no sample (a
 * trend whose `count` is 0, or a metric absent from the data).
 */
export function stat(data: SummaryData, metric: string, name: string): number | undefined {
  const values = data.metrics[metric]?.values;
  if (values === undefined || values.count === 0) return undefined;
  return values[name];
}
