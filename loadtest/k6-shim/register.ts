/**
 * A test harness, not a k6 replacement: runs a k6 script under Node against a real service, so
 * the scripts' logic and checks are exercised on machines without k6 (like CI here).
 *
 *   node --import ./loadtest/k6-shim/register.ts loadtest/k6-shim/run.ts loadtest/smoke.ts
 *
 * This hook maps the `k6` modules to the Node implementations beside it.
 */
import { registerHooks } from 'node:module';

const MODULES: Record<string, string> = {
  k6: 'k6.ts',
  'k6/http': 'http.ts',
  'k6/metrics': 'metrics.ts',
  'k6/encoding': 'encoding.ts',
  'k6/execution': 'execution.ts',
};

registerHooks({
  resolve(specifier, context, nextResolve) {
    const file = MODULES[specifier];
    if (file === undefined) return nextResolve(specifier, context);
    return { url: new URL(file, import.meta.url).href, shortCircuit: true };
  },
});
