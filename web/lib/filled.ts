/**
 * Runs a binding call that fills an `out` object (wasm-module.ts): throws its error message
 * through `fail`, else returns the filled object.
 */
export function filled<T>(call: (out: Partial<T>) => string, fail: (message: string) => Error): T {
  const out: Partial<T> = {};
  const err = call(out);
  if (err) throw fail(err);
  return out as T;
}
