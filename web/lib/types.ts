/** A dense row-major float32 tensor: `data.length` equals the product of `shape`. */
export interface Tensor {
  data: Float32Array;
  shape: number[];
}

/** A boolean tensor stored one byte per element (0 = false, anything else = true). */
export interface BoolTensor {
  data: Uint8Array;
  shape: number[];
}

/** A mask: boolean (meaning depends on the call, see each option) or additive float. */
export type Mask = BoolTensor | Tensor;

/** The WebAssembly builds: plain, SIMD128, and SIMD128 with a pthread pool. */
export type Variant = 'scalar' | 'simd' | 'simd-threads';

/** Where ops run: WebAssembly on the CPU, or WebGPU. */
export type Backend = 'wasm' | 'webgpu';

/**
 * The WebGPU entry point: `navigator.gpu` in a browser; in Node, `create([])` from the npm `webgpu`
 * package. Typed structurally so that attnlab's types need no WebGPU type package.
 */
export interface GpuProvider {
  requestAdapter(options?: object): Promise<unknown>;
}

/** The GPU adapter in use, as its `GPUAdapterInfo` describes it (fields may be empty strings). */
export interface GpuAdapterInfo {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
}

export interface LoadOptions {
  /**
   * `'wasm'` (default): everything runs on WebAssembly. `'webgpu'`: `attentionAsync`,
   * `maskedSoftmaxAsync` and `multiHeadAttentionAsync` run on the GPU, and load() rejects when no
   * WebGPU adapter is found. `'auto'`: `'webgpu'` when an adapter is found, else `'wasm'`; and a
   * call the GPU cannot take (an unsupported option, a lost device, out of GPU memory) runs on
   * WebAssembly instead of failing. `Attnlab.backend` tells which was chosen.
   */
  backend?: Backend | 'auto';
  /** For `'webgpu'` and `'auto'`: the WebGPU entry point. Default: `navigator.gpu`. */
  gpu?: GpuProvider;
  /**
   * Which build to run. Default: `'simd-threads'` where threads can run (always in Node; in a
   * browser when the page is cross-origin isolated), else `'simd'`, else `'scalar'`.
   */
  variant?: Variant;
  /**
   * Threads for the `'simd-threads'` build, counting the calling thread. Default: the number of
   * logical cores, at most 4. Ignored (1) by the other builds.
   */
  threads?: number;
}

/** Scoring functions a(q, k). */
export type ScoreName = 'scaled_dot' | 'dot' | 'general' | 'additive';

/** Learned parameters of the `'general'` and `'additive'` scores (PyTorch Linear layout). */
export interface ScoreParams {
  /** `'general'`: q^T W k with W of shape [Dq, Dk]. */
  W?: Tensor;
  /** `'additive'`: w^T tanh(Wq q + Wk k) with Wq [hidden, Dq], Wk [hidden, Dk], wv [hidden]. */
  Wq?: Tensor;
  Wk?: Tensor;
  wv?: Tensor;
}

export interface AttentionOptions {
  /** Scoring function; default `'scaled_dot'` (q . k / sqrt(d)). */
  score?: ScoreName;
  /** Parameters of `'general'` and `'additive'` scores. */
  params?: ScoreParams;
  /** Multiplier of dot-product scores; default 1/sqrt(d) for `'scaled_dot'`, 1 for `'dot'` and `'general'`. */
  scale?: number;
  /** Query i sees keys j <= i (top-left aligned when Sq != Sk, as PyTorch). */
  causal?: boolean;
  /**
   * Keys j >= validLens[...] are hidden (d2l's valid_lens). Length: one per leading index
   * (or per prefix of the leading dimensions, e.g. [B] for q of shape [B, H, Sq, D]), or one per
   * query row (prod(leading) * Sq). Values in [0, Sk]; 0 hides every key of the row.
   */
  validLens?: Int32Array;
  /**
   * As `torch.nn.functional.scaled_dot_product_attention`'s attn_mask: boolean true = may attend,
   * float = added to the scores (-Infinity blocks). Broadcasts (numpy rules) to [..., Sq, Sk].
   */
  attnMask?: Mask;
  /** Also return the attention weights [..., Sq, Sk]; default false. */
  returnWeights?: boolean;
}

export interface AttentionResult {
  output: Tensor;
  weights?: Tensor;
}

export interface MaskedSoftmaxOptions {
  causal?: boolean;
  validLens?: Int32Array;
  /** Boolean true = keep, float = added; broadcasts to the input's shape. */
  attnMask?: Mask;
}

export interface MultiHeadParams {
  numHeads: number;
  /** [3E, E]: the rows of W_q, then W_k, then W_v (PyTorch's in_proj_weight). */
  inProjWeight: Tensor;
  /** [3E] */
  inProjBias?: Tensor;
  /** [E, E] */
  outProjWeight: Tensor;
  /** [E] */
  outProjBias?: Tensor;
}

export interface MultiHeadOptions {
  /** Shortcut for a causal attn_mask (query i sees keys j <= i). */
  causal?: boolean;
  /** [B, S] (or [S] unbatched): boolean true = ignore that key; float = added. */
  keyPaddingMask?: Mask;
  /** [L, S] or [B * numHeads, L, S]: boolean true = NOT allowed (PyTorch MHA); float = added. */
  attnMask?: Mask;
  /** Return attention weights; default false (PyTorch defaults to true). */
  needWeights?: boolean;
  /** Average the weights over heads ([B, L, S]) rather than per head ([B, H, L, S]); default true. */
  averageWeights?: boolean;
}

/** Kernels of Nadaraya-Watson regression, K(u) with u = |q - k| / bandwidth. */
export type KernelName = 'gaussian' | 'boxcar' | 'epanechnikov' | 'triangular';

export interface NadarayaWatsonOptions {
  /**
   * `'gaussian'` exp(-u²/2) (default), `'boxcar'` 1 for u <= 1, `'epanechnikov'` max(0, 1 - u²),
   * `'triangular'` max(0, 1 - u): the kernel d2l and some slides call "Epanechikov".
   */
  kernel?: KernelName;
  /** h > 0, finite; default 1. */
  bandwidth?: number;
}

export interface NadarayaWatsonResult {
  /** Predictions; a query with no key inside a compact kernel's support predicts 0. */
  output: Tensor;
  /** Normalised kernel weights [..., Nq, Nk]; all zero for a query with no key in support. */
  weights: Tensor;
}

export interface HeapStats {
  /** Bytes handed out by malloc and not yet freed. */
  used: number;
  /** Current size of the WebAssembly memory. */
  total: number;
}
