// Uniform blocks of 32-bit fields, written in the order the WGSL struct declares them.

/** A field to store as f32; plain numbers are stored as u32. */
export interface F32 {
  f32: number;
}

export const f32 = (x: number): F32 => ({ f32: x });

/** Strided 2-D view of a buffer per slice bt = b * heads + h: element (r, c) of slice bt is at
 * offset + b * batchStride + h * headStride + r * rowStride + c. WGSL: vec4<u32>(offset, batch, head, row). */
export interface View {
  offset: number;
  batchStride: number;
  headStride: number;
  rowStride: number;
}

export const viewFields = (v: View): number[] => [v.offset, v.batchStride, v.headStride, v.rowStride];

/** WGSL: the first element of slice bt of a view; `heads` is the expression for heads per batch. */
export const sliceBaseWgsl = (heads: string) => /* wgsl */ `
fn sliceBase(view: vec4<u32>, bt: u32) -> u32 {
  return view.x + (bt / ${heads}) * view.y + (bt % ${heads}) * view.z;
}
`;

/** Packs fields into a Uint32Array padded to 16 bytes (a uniform struct's alignment). */
export function packUniform(fields: readonly (number | F32)[]): Uint32Array {
  const words = new Uint32Array(Math.ceil(fields.length / 4) * 4);
  const floats = new Float32Array(words.buffer);
  fields.forEach((x, i) => {
    if (typeof x === 'number') {
      if (!Number.isInteger(x) || x < 0 || x > 0xffffffff) throw new Error(`internal: uniform field ${i} = ${x} is not a u32`);
      words[i] = x;
    } else {
      floats[i] = x.f32;
    }
  });
  return words;
}
