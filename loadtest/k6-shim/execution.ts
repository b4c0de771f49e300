/** `k6/execution` (harness implementation, see register.ts): only what the scripts read. */
import { context } from './state.ts';

export const scenario = {
  get name() {
    return context.scenario;
  },
  get startTime() {
    return context.startTime;
  },
};

export default { scenario };
