/** k6 durations, parsed without k6 so that Node tests can check the parser. */

/**
 * Seconds of a duration written as k6 accepts it: `500ms`, `30s`, `5m`, `1h30m`, or bare seconds.
 * Throws an Error naming the variable `name` for anything else.
 */
export function parseDuration(name: string, text: string): number {
  if (/^[0-9]+$/.test(text)) return Number(text);
  const re = /([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/g;
  let seconds = 0;
  let consumed = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m.index !== consumed) break;
    consumed += m[0].length;
    const value = Number(m[1]);
    const unit = m[2];
    seconds += unit === 'ms' ? value / 1000 : unit === 's' ? value : unit === 'm' ? value * 60 : value * 3600;
  }
  if (consumed !== text.length || consumed === 0) {
    throw new Error(`${name} must be a duration such as 30s, 5m or 1h30m, got '${text}'`);
  }
  return seconds;
}
