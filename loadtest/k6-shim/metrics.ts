/** `k6/metrics` (harness implementation, see register.ts). */
import { add, declare, type MetricType } from './state.ts';

class Metric {
  readonly name: string;
  readonly #type: MetricType;
  constructor(name: string, type: MetricType, isTime = false) {
    this.name = name;
    this.#type = type;
    declare(name, type, isTime ? 'time' : 'default');
  }
  add(value: number | boolean, tags?: Record<string, string>): void {
    add(this.name, this.#type, Number(value), tags);
  }
}

export class Counter extends Metric {
  constructor(name: string, isTime = false) {
    super(name, 'counter', isTime);
  }
}
export class Gauge extends Metric {
  constructor(name: string, isTime = false) {
    super(name, 'gauge', isTime);
  }
}
export class Rate extends Metric {
  constructor(name: string, isTime = false) {
    super(name, 'rate', isTime);
  }
}
export class Trend extends Metric {
  constructor(name: string, isTime = false) {
    super(name, 'trend', isTime);
  }
}

export default { Counter, Gauge, Rate, Trend };
