// The demo's input, shared with tests/browser so the test can check the numbers independently.
export const SEQ = 4;
export const DIM = 8;

export interface ExampleTensor {
  data: Float32Array;
  shape: number[];
}

/** Deterministic q, k, v of shape [1, SEQ, DIM]: smooth, distinct values, no randomness. */
export function exampleInputs(): { q: ExampleTensor; k: ExampleTensor; v: ExampleTensor } {
  const make = (f: (i: number) => number): ExampleTensor => ({
    data: Float32Array.from({ length: SEQ * DIM }, (_, i) => f(i)),
    shape: [1, SEQ, DIM],
  });
  return {
    q: make((i) => Math.sin(0.37 * i + 0.5)),
    k: make((i) => Math.cos(0.23 * i - 0.4)),
    v: make((i) => ((i * 7) % 11) / 10 - 0.5),
  };
}
