/**
 * WebAssembly instances that trapped. A binding never throws (its errors come back as strings,
 * out of memory included), so an exception out of one is a trap (RuntimeError: unreachable,
 * memory access out of bounds; a stack overflow's RangeError) or a JavaScript exception thrown
 * through the engine's frames. Either way the C++ epilogues were skipped: the shadow stack
 * pointer, a held lock, a half-built object are left as they were, so the instance is never run
 * again. Keyed by the module object; what it says is kept for the later calls' Errors.
 */
const trapped = new WeakMap<object, string>();

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
 * Runs `call`, a binding call of `m`, for the public call `fn`. After a trap in it, or in an
 * earlier call of `m`, throws a TrapError naming `fn`, the trap and `again`.
 */
export function guardTrap<T>(m: object, fn: string, again: string, call: () => T): T {
  checkTrapped(m, fn, again);
  try {
    return call();
  } catch (e) {
    const trap = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    trapped.set(m, trap);
    throw new TrapError(`${fn}: the WebAssembly instance trapped (${trap}) and cannot be used again; ${again}`, trap, { cause: e });
  }
}
