const dataViewByteLength = Object.getOwnPropertyDescriptor(DataView.prototype, 'byteLength')!.get!;

/**
 * A DataView's size in bytes, or undefined for anything else, by its internal slot as in
 * tensor.ts's isArrayBuffer: instanceof misses another realm's DataViews (an iframe's, a vm
 * context's), and a Proxy over one passes instanceof but throws on reading byteLength.
 */
function dataViewBytes(value: unknown): number | undefined {
  try {
    return dataViewByteLength.call(value) as number;
  } catch {
    return undefined;
  }
}

/** Describes a value for an error message: its type, and a short rendering of small values. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return value.length <= 8 ? `[${value.map(describe).join(', ')}]` : `an array of length ${value.length}`;
  // A DataView has no length: its size in bytes, not "DataView(undefined)".
  const bytes = dataViewBytes(value);
  if (bytes !== undefined) return `a DataView of ${bytes} bytes`;
  if (ArrayBuffer.isView(value)) return `${value.constructor.name}(${(value as unknown as ArrayLike<unknown>).length})`;
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value);
  // A BigInt keeps its n: "got 10" for 10n read as if the number 10 had been refused.
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'function') return 'a function';
  const name = (value as object).constructor?.name;
  if (!name || name === 'Object') return 'an object';
  return `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}`;  // an ArrayBuffer, an Error
}

/** `fn: arg: expected X, got Y`. */
export function argError(fn: string, arg: string, expected: string, got: unknown): Error {
  return new Error(`${fn}: ${arg}: expected ${expected}, got ${describe(got)}`);
}

/**
 * argError for an argument of integers with no upper bound in `expected`: "expected an integer
 * >= 0, got 9007199254740992" reads as if the rule were met, so an integer past 2^53 - 1 (where
 * numbers stop being exact integers, which is why it is refused) is said to be one.
 */
export function intError(fn: string, arg: string, expected: string, got: unknown): Error {
  const values = Array.isArray(got) ? got : [got];
  const unsafe = values.some((x) => typeof x === 'number' && Number.isInteger(x) && !Number.isSafeInteger(x));
  return new Error(`${fn}: ${arg}: expected ${expected}, got ${describe(got)}${unsafe ? ' (past 2^53 - 1, the largest exact integer)' : ''}`);
}
