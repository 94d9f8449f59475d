/**
 * WebAssembly instances that trapped. A binding never throws (its errors come back as strings,
 * out of memory included), so an exception out of one is a trap (RuntimeError: unreachable,
 * memory access out of bounds; a stack overflow's RangeError) or a JavaScript exception thrown
 * through the engine's frames. Either way the C++ epilogues were skipped: the shadow stack
 * pointer, a held lock, a half-built object are left as they were, so the instance is never run
 * again. Keyed by the module object; what it says is kept for the later calls' Errors.
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

/** Records that `m` trapped with `e` (unless it already had) and returns the public call `fn`'s TrapError. */
function trapError(m: object, fn: string, again: string, e: unknown): TrapError {
  const trap = trapped.get(m) ?? said(e);
  trapped.set(m, trap);
  return new TrapError(`${fn}: the WebAssembly instance trapped (${trap}) and cannot be used again; ${again}`, trap, { cause: e });
}

/**
 * Runs `call`, a binding call of `m`, for the public call `fn`. After a trap in it, or in an
 * earlier call of `m`, throws a TrapError naming `fn`, the trap and `again`.
 */
export function guardTrap<T>(m: object, fn: string, again: string, call: () => T): T {
  checkTrapped(m, fn, again);
  try {
    return call();
  } catch (e) {
    throw trapError(m, fn, again, e);
  }
}

/**
 * For a module whose bindings are called from many places (the core's ops): wraps each of
 * `names` so that an exception out of it records the trap, then goes on up. The public call that
 * made it turns it into its TrapError with asTrapError(); its cleanup asks hasTrapped().
 */
export function guardBindings<M extends object>(m: M, names: readonly (keyof M & string)[]): void {
  const fns = m as Record<string, unknown>;
  for (const name of names) {
    const binding = fns[name] as (...args: unknown[]) => unknown;
    fns[name] = (...args: unknown[]) => {
      try {
        return binding.apply(m, args);
      } catch (e) {
        if (!trapped.has(m)) trapped.set(m, said(e));
        throw e;
      }
    };
  }
}

/** What the public call `fn` throws for `e`: `fn`'s TrapError when `e` came out of a trap of `m` (guardBindings), else `e`. */
export function asTrapError(m: object, fn: string, again: string, e: unknown): unknown {
  return trapped.has(m) && !(e instanceof TrapError) ? trapError(m, fn, again, e) : e;
}
