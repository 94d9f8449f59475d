/**
 * WebAssembly instances that trapped. A binding never throws (its errors come back as strings,
 * out of memory included), nor does _malloc (0 when out of memory), so an exception out of one is
 * a trap (RuntimeError: unreachable, memory access out of bounds; a stack overflow's RangeError)
 * or a JavaScript exception thrown through the engine's frames. Either way the C++ epilogues were
 * skipped: the shadow stack pointer, a held lock, a half-built object are left as they were, so
 * the instance is never run again. Keyed by the module object; what it says is kept for the later
 * calls' Errors.
 */
const trapped = new WeakMap<object, string>();

/** A thrown value as the Errors quote it: "RuntimeError: unreachable". */
const said = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

/** A call's Error for a trap: `trap` is the thrown error's "name: message". */
export class TrapError extends Error {
  constructor(message: string, readonly trap: string, options?: { cause: unknown }) {
    super(message, options);
  }
}

/** Whether `m` trapped (then nothing may call it again, not even its free or dispose). */
export function hasTrapped(m: object): boolean {
  return trapped.has(m);
}

/** Throws a TrapError for the public call `fn` when `m` trapped; `again`: how to get a fresh instance. */
export function checkTrapped(m: object, fn: string, again: string): void {
  const before = trapped.get(m);
  if (before !== undefined) throw new TrapError(`${fn}: the WebAssembly instance trapped in an earlier call (${before}) and cannot be used again; ${again}`, before);
}

/**
 * Makes every function of the module `m` named in `names` (its bindings, _malloc, _free: what the
 * library calls) record a trap as its exception goes on up: once, where the module is made. A
 * public call refuses a trapped module with checkTrapped() and turns the exception into its
 * TrapError with asTrapError() (both at once: trapGuarded()); its cleanup asks hasTrapped().
 */
export function guardModule(m: { _malloc(bytes: number): number; _free(ptr: number): void }, names: readonly string[]): void {
  // Emscripten's first call of _malloc or _free, from here or its own glue, replaces it on the
  // module with the raw export: made now, it cannot drop a wrapper later.
  m._free(m._malloc(0));
  const fns = m as unknown as Record<string, unknown>;
  for (const name of names) {
    const f = fns[name];
    if (typeof f !== 'function') continue;
    fns[name] = (...args: unknown[]) => {
      try {
        return f.apply(m, args);
      } catch (e) {
        if (!trapped.has(m)) trapped.set(m, said(e));
        throw e;
      }
    };
  }
}

/** Runs `body` for the public call `fn` on `m`: refused when `m` trapped before (checkTrapped), and a trap in it thrown as `fn`'s TrapError (asTrapError). */
export function trapGuarded<T>(m: object, fn: string, again: string, body: () => T): T {
  checkTrapped(m, fn, again);
  try {
    return body();
  } catch (e) {
    throw asTrapError(m, fn, again, e);
  }
}

/** What the public call `fn` throws for `e`: `fn`'s TrapError when `e` came out of a trap of `m` (guardModule), else `e`. */
export function asTrapError(m: object, fn: string, again: string, e: unknown): unknown {
  const trap = trapped.get(m);
  if (trap === undefined || e instanceof TrapError) return e;
  return new TrapError(`${fn}: the WebAssembly instance trapped (${trap}) and cannot be used again; ${again}`, trap, { cause: e });
}
