/// <reference types="@webgpu/types" />
// The kernels as the ops use them: a spec per shape class (the pipeline-cache key and its WGSL)
// and an encoder that binds a kernel's buffers in the order its shader declares them.
import type { MaskLayout } from '../mask-layout.js';
import type { RopeArgs } from '../rope.js';
import type { GpuCall } from './call.js';
import { GpuOverflowError } from './errors.js';
import { additiveParams, additiveShader, additiveWorkgroups, type AdditiveShape } from './shaders/additive.js';
import { flashKeyTile, flashParams, flashShader, flashWorkgroups, type FlashShape } from './shaders/flash.js';
import { packMasks } from './shaders/masks.js';
import { headMeanParams, headMeanShader, headMeanWorkgroups, type HeadMeanShape } from './shaders/head-mean.js';
import { matmulParams, matmulShader, matmulWorkgroups, type MatmulShape } from './shaders/matmul.js';
import { ropeParams, ropeShader, ropeTable, ropeWorkgroups, type RopeShape } from './shaders/rope.js';
import { softmaxParams, softmaxShader, softmaxWorkgroups, type SoftmaxShape } from './shaders/softmax.js';
import type { View } from './shaders/uniform.js';

/** A kernel's shape class: everything baked into its WGSL. Sizes, strides and masks are uniforms. */
export interface KernelSpec {
  key: string;
  source: () => string;
}

export const matmulKernel = (transB: boolean): KernelSpec => ({ key: `matmul:${transB ? 'kj' : 'jk'}`, source: () => matmulShader(transB) });

export function flashKernel(D: number, Dv: number, workgroupBytes: number): KernelSpec {
  const tile = flashKeyTile(D, Dv, workgroupBytes);
  return { key: `flash:${D}:${Dv}:${tile}`, source: () => flashShader(D, Dv, tile) };
}

export const softmaxKernel: KernelSpec = { key: 'softmax', source: softmaxShader };
export const headMeanKernel: KernelSpec = { key: 'head-mean', source: headMeanShader };
export const ropeKernel: KernelSpec = { key: 'rope', source: ropeShader };
export const additiveKernel: KernelSpec = { key: 'additive', source: additiveShader };

/** The masks of a call on the GPU: the uniform block and the data buffer of shaders/masks.ts. */
export interface GpuMasks {
  params: GPUBuffer;
  data: GPUBuffer;
}

export function uploadMasks(call: GpuCall, layout: MaskLayout): GpuMasks {
  const packed = packMasks(layout);
  return { params: call.uniform(packed.params), data: call.upload(packed.data) };
}

/** Slices of a dense [slices, rows, cols] tensor. */
export const dense = (rows: number, cols: number): View => ({ offset: 0, batchStride: rows * cols, headStride: 0, rowStride: cols });

/** C = alpha * A B (+ bias). */
export function matmul(call: GpuCall, p: GPUComputePipeline, s: MatmulShape, a: GPUBuffer, b: GPUBuffer, bias: GPUBuffer | null, c: GPUBuffer): void {
  // Without a bias, A stands in for the (unread) bias binding.
  call.dispatch(p, [call.uniform(matmulParams(s)), a, b, bias ?? a, c], matmulWorkgroups(s));
}

export function flash(call: GpuCall, p: GPUComputePipeline, s: FlashShape, masks: GpuMasks, q: GPUBuffer, k: GPUBuffer, v: GPUBuffer, o: GPUBuffer): void {
  call.dispatch(p, [call.uniform(flashParams(s)), masks.params, masks.data, q, k, v, o], flashWorkgroups(s));
}

export function softmax(call: GpuCall, p: GPUComputePipeline, s: SoftmaxShape, masks: GpuMasks, x: GPUBuffer, y: GPUBuffer): void {
  call.dispatch(p, [call.uniform(softmaxParams(s)), masks.params, masks.data, x, y], softmaxWorkgroups(s));
}

/** Additive (Bahdanau) scores from projected queries and keys. */
export function additiveScores(call: GpuCall, p: GPUComputePipeline, s: AdditiveShape, qp: GPUBuffer, kp: GPUBuffer, wv: GPUBuffer, scores: GPUBuffer): void {
  call.dispatch(p, [call.uniform(additiveParams(s)), qp, kp, wv, scores], additiveWorkgroups(s));
}

export function headMean(call: GpuCall, p: GPUComputePipeline, s: HeadMeanShape, w: GPUBuffer, out: GPUBuffer): void {
  call.dispatch(p, [call.uniform(headMeanParams(s)), w, out], headMeanWorkgroups(s));
}

/**
 * x rotated by RoPE into a new buffer `out` (x [outer, S, inner, D]); `firstBad` holds the first
 * index whose rotation overflowed, as one u32 (read it back for ropeOverflow).
 */
export function rope(call: GpuCall, p: GPUComputePipeline, r: RopeArgs, s: Omit<RopeShape, 'interleaved'>, x: GPUBuffer): { out: GPUBuffer; firstBad: GPUBuffer } {
  const shape = { ...s, interleaved: r.interleaved };
  const out = call.scratch(s.outer * s.S * s.inner * s.D);
  const firstBad = call.upload(Uint32Array.of(NO_OVERFLOW));
  call.dispatch(p, [call.uniform(ropeParams(shape)), call.upload(ropeTable(r, s.S, s.D)), x, out, firstBad], ropeWorkgroups(shape));
  return { out, firstBad };
}

const NO_OVERFLOW = 0xffffffff;

/**
 * The Error WebAssembly raises for a rotation past float32 (cpp/src/rope.cpp), from the read-back
 * `firstBad` word of each rotated argument (`names`, in the order the core turns them), or null.
 */
export function ropeOverflow(fn: string, firstBad: Float32Array[], names: string[]): GpuOverflowError | null {
  for (let t = 0; t < firstBad.length; t++) {
    const at = new Uint32Array(firstBad[t].buffer, firstBad[t].byteOffset, 1)[0];
    if (at !== NO_OVERFLOW) return new GpuOverflowError(`${fn}: ${names[t]}: the rotation overflows float32 (beyond ±3.4e38) at index ${at}; scale the inputs down`);
  }
  return null;
}
