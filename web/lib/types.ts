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

/**
 * A tensor argument: a Tensor whose shape may also be a readonly array (`[2, 4, 8] as const`,
 * onnxruntime-web's `dims`). Results are Tensors, their shapes plain arrays.
 */
export interface TensorInput {
  data: Float32Array;
  shape: readonly number[];
}

/** A boolean tensor argument, its shape as TensorInput's. */
export interface BoolTensorInput {
  data: Uint8Array;
  shape: readonly number[];
}

/** A mask: boolean (meaning depends on the call, see each option) or additive float. */
export type Mask = BoolTensorInput | TensorInput;

/**
 * The WebAssembly builds: plain, SIMD128, and SIMD128 with a pthread pool; the `relaxed-` twins
 * of the SIMD builds use relaxed SIMD's fused multiply-add (`f32x4.relaxed_madd`), which rounds
 * once where the processor has FMA, so their last bits may differ from `'simd'`'s and between machines.
 */
export type Variant = 'scalar' | 'simd' | 'simd-threads' | 'relaxed-simd' | 'relaxed-simd-threads';

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
  /** For `'webgpu'` and `'auto'`: how many GPU buffers to keep between calls, and for how long. */
  gpuCache?: GpuCacheOptions;
  /**
   * Which build to run. Default: the fastest this engine can run: `'relaxed-simd-threads'` where
   * relaxed SIMD (Chromium >= 114, Firefox >= 153 ESR, Node >= 21) and threads can run (always in Node; in a browser
   * when the page is cross-origin isolated), else `'relaxed-simd'`, `'simd-threads'`, `'simd'`,
   * `'scalar'`. A build that cannot start here gives way to the next one down instead of failing
   * (never from a non-relaxed build to a relaxed one, nor from a single-threaded build to a
   * threaded one); `Attnlab.variant` and `Attnlab.variantReason` tell which one runs and why.
   */
  variant?: Variant;
  /**
   * Threads for the threaded builds (`'simd-threads'`, `'relaxed-simd-threads'`), counting the calling thread. Default: the number of
   * logical cores, at most 4. More than 1 with a single-threaded `variant` is an error; where the
   * threaded builds cannot run (no SharedArrayBuffer) the fallback runs on 1, and `variantReason` says so.
   */
  threads?: number;
}

/** Scoring functions a(q, k). */
export type ScoreName = 'scaled_dot' | 'dot' | 'general' | 'additive';

/** Learned parameters of the `'general'` and `'additive'` scores (PyTorch Linear layout). */
export interface ScoreParams {
  /** `'general'`: q^T W k with W of shape [Dq, Dk]. */
  W?: TensorInput;
  /** `'additive'`: w^T tanh(Wq q + Wk k) with Wq [hidden, Dq], Wk [hidden, Dk], wv [hidden]. */
  Wq?: TensorInput;
  Wk?: TensorInput;
  wv?: TensorInput;
}

/**
 * Sliding-window attention: query i sees the keys j with |i - j| <= `window`; with the
 * `causal` option, i - window <= j <= i. Costs O(S · window · D), never an S x S matrix.
 */
export interface LocalPattern {
  /** Sliding window. */
  type: 'local';
  /** Radius of the window in tokens, an integer >= 0 (0: each query sees only key i). */
  window: number;
}

/**
 * Longformer (Beltagy et al.): a sliding window plus global tokens, which see every key and are
 * seen by every query.
 */
export interface LongformerPattern {
  /** Window plus global tokens. */
  type: 'longformer';
  /** Radius of the window in tokens, an integer >= 0. */
  window: number;
  /**
   * Indices of the global tokens, integers in [0, max(Sq, Sk)): index g makes query row g (when
   * g < Sq) and key column g (when g < Sk) dense. Default none.
   */
  global?: readonly number[];
}

/**
 * BigBird (Zaheer et al.): the sequence cut into blocks; each query block sees a window of
 * blocks, the global blocks, and `randomBlocks` key blocks drawn at random (seeded). Only those
 * blocks are computed.
 */
export interface BigBirdPattern {
  /** Window, global and random blocks. */
  type: 'bigbird';
  /** Tokens per block, an integer >= 1; the last block may be shorter. */
  blockSize: number;
  /** Blocks on each side of a query's own block that it sees; default 1 (a 3-block window). */
  windowBlocks?: number;
  /**
   * Global block indices, integers in [0, max(ceil(Sq / blockSize), ceil(Sk / blockSize))): their
   * queries see every key and their keys are seen by every query. Default [0].
   */
  globalBlocks?: readonly number[];
  /**
   * Random key blocks per query block, drawn without repeats from the blocks outside its window
   * and the global blocks (fewer when fewer are left); default 3.
   */
  randomBlocks?: number;
  /** Seed of the random blocks, an integer >= 0; the same seed gives the same pattern. Default 0. */
  seed?: number;
}

/** A sparse attention pattern; draw it with `lib.attentionPattern()`. */
export type AttentionPattern = LocalPattern | LongformerPattern | BigBirdPattern;

export interface AttentionPatternOptions {
  /** Also hide keys j > i, as `attention`'s `causal` option does; default false. */
  causal?: boolean;
}

/** Rotary position embedding (Su et al., RoFormer). */
export interface RopeOptions {
  /** Base θ of the frequencies base^(-2c/D); a finite number > 0, default 10000. */
  base?: number;
  /**
   * Position of the first row, an integer >= 0; default 0. A decoder generating token n with a
   * cache of n keys rotates its query with offset n.
   */
  offset?: number;
  /**
   * Which features turn together: `'interleaved'` (default) pairs (2c, 2c+1), as Su et al. and
   * Meta's LLaMA code; `'halves'` pairs (c, c + D/2), as GPT-NeoX and Hugging Face's
   * `rotate_half`.
   */
  pairs?: 'interleaved' | 'halves';
}

/**
 * T5's bucketed relative position bias (Raffel et al.): a learned scalar per head and bucket of the
 * distance j - i, added to the scores. Distances below numBuckets / 4 (bidirectional) or
 * numBuckets / 2 (causal) get a bucket each; longer ones share logarithmically wider buckets up to
 * `maxDistance`, beyond which all share the last. Buckets as Hugging Face's T5 computes them.
 */
export interface T5BiasOptions {
  /** The learned bias [heads, numBuckets]; numBuckets >= 4 (bidirectional) or >= 2 (causal). */
  weights: TensorInput;
  /**
   * `true` (default, T5's encoder): keys before and after a query have their own buckets.
   * `false` (T5's decoder): every key after the query falls in bucket 0.
   */
  bidirectional?: boolean;
  /** Distance where the last bucket begins, an integer above the exact buckets' span; default 128. */
  maxDistance?: number;
}

/**
 * Shaw et al.'s relative position representations: learned vectors a_K[r] (and a_V[r]) for the
 * clipped distance r = clip(j - i, -maxDistance, maxDistance), so that
 * score_ij = scale · q_i · (k_j + a_K[r]) and out_i = Σ_j w_ij (v_j + a_V[r]). Runs on
 * WebAssembly (its own kernel, O(Sk) memory per query); not on WebGPU.
 */
export interface ShawOptions {
  /** The clipping distance k, an integer >= 0. */
  maxDistance: number;
  /** a_K [2k + 1, D] (D: the keys' feature size, or the head size in multiHeadAttention); row r + k for distance r. */
  keys: TensorInput;
  /** a_V [2k + 1, Dv]; default none (the values are left alone). */
  values?: TensorInput;
}

export interface AttentionOptions {
  /** Scoring function; default `'scaled_dot'` (q . k / sqrt(d)). */
  score?: ScoreName;
  /** Parameters of `'general'` and `'additive'` scores. */
  params?: ScoreParams;
  /** Multiplier of dot-product scores; default 1/sqrt(d) for `'scaled_dot'`, 1 for `'dot'` and `'general'`. */
  scale?: number;
  /** Query i sees keys j <= i (top-left aligned when Sq != Sk, as PyTorch; see `queryOffset`). */
  causal?: boolean;
  /**
   * The key position of query row 0, an integer >= 0; default 0 (top-left aligned, as PyTorch).
   * Query i then sits at position i + queryOffset: `causal` lets it see keys j <= i + queryOffset,
   * `alibi`, `t5` and `shaw` measure the distance (i + queryOffset) - j, and `rope` turns it for
   * position offset + queryOffset + i (keys: offset + j). Sk - Sq (bottom-right aligned, as
   * flash-attn) serves a KV-cached decoder (Sq = 1) or a chunked prefill: the result is the last
   * Sq rows of the call over all Sk queries. Larger values are allowed (rows past the last key
   * see every key under `causal`). Not with `pattern` unless 0.
   */
  queryOffset?: number;
  /**
   * Keys j >= validLens[...] are hidden (d2l's valid_lens). Length: one per leading index
   * (or per prefix of the leading dimensions, e.g. [B] for q of shape [B, H, Sq, D]), or one per
   * query row (prod(leading) * Sq). Values in [0, Sk]; 0 hides every key of the row.
   */
  validLens?: Int32Array | readonly number[];
  /**
   * As `torch.nn.functional.scaled_dot_product_attention`'s attn_mask: boolean true = may attend,
   * float = added to the scores (-Infinity blocks). Broadcasts (numpy rules) to [..., Sq, Sk].
   */
  attnMask?: Mask;
  /** Also return the attention weights [..., Sq, Sk]; default false. */
  returnWeights?: boolean;
  /**
   * Sparse attention: only the keys the pattern allows are scored (on WebAssembly, cost
   * O(visible keys · D) per query; on WebGPU the pattern runs as a dense boolean mask). The other
   * options (masks, `alibi`, `rope`) apply on top. Scores `'scaled_dot'` and `'dot'` only.
   */
  pattern?: AttentionPattern;
  /**
   * ALiBi (Press et al.): adds -slope[h] · |i - j| to the scores of head h, the heads being
   * q's dimension -3 (one head for q of rank 2). `true`: the paper's slopes 2^(-8h/H);
   * a Float32Array: your slopes, one per head, finite and >= 0.
   */
  alibi?: boolean | Float32Array;
  /**
   * Rotary position embedding of q and k before the scores (q's and k's feature sizes must be
   * even); `true` for the defaults. The same as passing `lib.rope(q)` and `lib.rope(k)`.
   */
  rope?: boolean | RopeOptions;
  /**
   * T5's relative bias, one row of `weights` per head (q's dimension -3; one head for q of rank 2).
   * On WebGPU too (as an additive mask).
   */
  t5?: T5BiasOptions;
  /**
   * Shaw's relative embeddings in the keys (and values); scores `'scaled_dot'` and `'dot'` only,
   * not with `pattern`. WebAssembly only: `'webgpu'` refuses it, `'auto'` runs it there.
   */
  shaw?: ShawOptions;
  /**
   * Write the output here instead of a new array: a Float32Array of the output's length
   * (prod(leading) * Sq * Dv); the result's `output.data` is this array. For loops that call
   * attention on same-sized inputs (an animation, a decoder): no allocation per call, and none of
   * the array's memory touched for the first time. It may be one of the inputs' data (it is
   * written after they are read). On WebGPU it is filled when the promise resolves.
   */
  out?: Float32Array;
}

export interface AttentionResult {
  output: Tensor;
  weights?: Tensor;
}

/** What `returnWeights: true` (attention) and `needWeights: true` (multi-head) return: the weights are there. */
export interface AttentionResultWithWeights extends AttentionResult {
  weights: Tensor;
}

export interface MaskedSoftmaxOptions {
  /** Row i keeps columns j <= i + queryOffset. */
  causal?: boolean;
  /** The column of row 0's diagonal for `causal`, an integer >= 0; default 0 (Sk - Sq: bottom-right). */
  queryOffset?: number;
  validLens?: Int32Array | readonly number[];
  /** Boolean true = keep, float = added; broadcasts to the input's shape. */
  attnMask?: Mask;
  /** As attention's `out`: a Float32Array of the input's length the result is written into. */
  out?: Float32Array;
}

/** attentionScores()'s options: attention's score, its parameters and scale. */
export interface AttentionScoresOptions extends Pick<AttentionOptions, 'score' | 'params' | 'scale'> {
  /** As attention's `out`: a Float32Array of prod(leading) * Sq * Sk values the scores are written into. */
  out?: Float32Array;
}

export interface LinearOptions {
  /** As attention's `out`: a Float32Array of the output's length (rows * out) it is written into. */
  out?: Float32Array;
}

export interface MultiHeadParams {
  numHeads: number;
  /** Shape `[3E, E]`: the rows of W_q, then W_k, then W_v (PyTorch's in_proj_weight). */
  inProjWeight: TensorInput;
  /** [3E] */
  inProjBias?: TensorInput;
  /** [E, E] */
  outProjWeight: TensorInput;
  /** [E] */
  outProjBias?: TensorInput;
}

export interface MultiHeadOptions {
  /** Shortcut for a causal attn_mask (query i sees keys j <= i + queryOffset). */
  causal?: boolean;
  /**
   * The key position of query row 0, an integer >= 0; default 0. As `attention`'s: `causal`,
   * `alibi`, `t5` and `shaw` take query i at position i + queryOffset, and `rope` turns the
   * projected queries for position offset + queryOffset + i. L = 1 with queryOffset = S - 1 is a
   * KV-cached decoder step.
   */
  queryOffset?: number;
  /** [B, S] (or [S] unbatched): boolean true = ignore that key; float = added. */
  keyPaddingMask?: Mask;
  /** [L, S] or [B * numHeads, L, S]: boolean true = NOT allowed (PyTorch MHA); float = added. */
  attnMask?: Mask;
  /** Return attention weights; default false (PyTorch defaults to true). */
  needWeights?: boolean;
  /** Average the weights over heads ([B, L, S]) rather than per head ([B, H, L, S]); default true. */
  averageWeights?: boolean;
  /**
   * ALiBi: adds -slope[h] · |i - j| to head h's scores. `true`: the paper's slopes; a
   * Float32Array: numHeads slopes, finite and >= 0.
   */
  alibi?: boolean | Float32Array;
  /**
   * Rotary position embedding of each head's projected queries and keys (the head size
   * E / numHeads must be even); `true` for the defaults.
   */
  rope?: boolean | RopeOptions;
  /** T5's relative bias, `weights` [numHeads, numBuckets]. On WebGPU too (as an additive mask). */
  t5?: T5BiasOptions;
  /**
   * Shaw's relative embeddings of the head size E / numHeads, shared by the heads (as in the
   * paper). WebAssembly only: `'webgpu'` refuses it, `'auto'` runs it there.
   */
  shaw?: ShawOptions;
  /** As attention's `out`: a Float32Array of B * L * E values the output is written into. */
  out?: Float32Array;
}

/** Kernelised attention with φ(x) = elu(x) + 1 (Katharopoulos et al., "Transformers are RNNs"). */
export interface EluAttentionOptions {
  /** `'elu'`, the default. */
  method?: 'elu';
  /** Query i sums over keys j <= i only (running sums: an RNN); default false. */
  causal?: boolean;
}

/**
 * Performer's FAVOR+ (Choromanski et al.): positive orthogonal random features whose products
 * estimate exp(q · k / sqrt(D)) without bias, so the output approaches `attention`'s (scaled
 * dot product) as `features` grows. The estimate is tighter for q and k of moderate norm.
 */
export interface FavorAttentionOptions {
  /** Performer's FAVOR+. */
  method: 'favor+';
  /** Number of random features m, an integer >= 1; cost O(S · m · (D + Dv)). Default 256. */
  features?: number;
  /** Seed of the random features, an integer >= 0; default 0. */
  seed?: number;
  /** Query i sums over keys j <= i only; default false. */
  causal?: boolean;
}

/**
 * Linformer (Wang et al.): keys and values projected along the sequence to `rank` rows,
 * softmax(q (E k)^T / sqrt(D)) (F v). It mixes all positions, so it has no causal form.
 */
export interface LinformerAttentionOptions {
  /** Linformer. */
  method: 'linformer';
  /** Rows of the projections, an integer >= 1; default 64, or `projection.E`'s row count. */
  rank?: number;
  /**
   * Projections E and F [rank, Sk] (learned ones, say); F defaults to E (shared projection).
   * Default: Gaussian with variance 1/rank, drawn from `seed`, F apart from E.
   */
  projection?: { E: TensorInput; F?: TensorInput };
  /** Seed of the drawn projections, an integer >= 0; default 0. */
  seed?: number;
}

/** Linear-cost attention: one of the methods, chosen by `method`. */
export type LinearAttentionOptions = EluAttentionOptions | FavorAttentionOptions | LinformerAttentionOptions;

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
  /**
   * As attention's `out`: a Float32Array of the output's length it is written into (`weights` is
   * a new array each call).
   */
  out?: Float32Array;
}

export interface NadarayaWatsonResult {
  /** Predictions; a query with no key inside a compact kernel's support predicts 0. */
  output: Tensor;
  /** Normalised kernel weights [..., Nq, Nk]; all zero for a query with no key in support. */
  weights: Tensor;
}

/**
 * GPU buffers kept for reuse, so that repeated calls of the same sizes allocate nothing. A buffer
 * no call took during the next 16 calls is freed whatever these say; `trimGpuCache()` frees them all.
 */
export interface GpuCacheOptions {
  /** Bytes of free buffers kept at most; past it the least recently used go. Default 128 MiB; 0 keeps none. */
  maxBytes?: number;
  /** Milliseconds without a GPU call after which every free buffer is freed. Default 1000; `Infinity`: never. */
  idleMs?: number;
}

/** GPU memory of an instance's `…Async` ops, in bytes. */
export interface GpuStats {
  /** In buffers of calls running now. */
  used: number;
  /** In free buffers kept for the next calls (see `LoadOptions.gpuCache`). */
  cached: number;
}

/**
 * The WebAssembly memory of an instance's modules on this thread: the ops' and, once a translator
 * or trainer was loaded in-process, theirs. Translators in a Worker (`worker: true`) and
 * checkpoints from `loadModel` (see its `heapBytes()`) have heaps of their own, not counted here.
 */
export interface HeapStats {
  /** Bytes handed out by malloc and not yet freed. */
  used: number;
  /** Current size of the WebAssembly memory. */
  total: number;
}

/**
 * Reformer's LSH attention (Kitaev et al.): queries and keys share one projection `qk`; each round
 * hashes the tokens by a random rotation (angular LSH), sorts them by bucket, cuts them into chunks
 * and lets each query attend to its chunk and the one before. A token attends to itself only when
 * it sees no other key. Rounds combine by their log-sum-exp.
 */
export interface LshAttentionOptions {
  /** Buckets per round, an even integer >= 2; it must divide S unless `chunkSize` is given. Default 8. */
  nBuckets?: number;
  /** Hash rounds, an integer >= 1; more rounds, closer to full attention. Default 1. */
  nHashes?: number;
  /** Tokens per chunk, a divisor of S; default S / nBuckets. */
  chunkSize?: number;
  /** Query i sees keys j <= i only; default false. */
  causal?: boolean;
  /** Seed of the random rotations, an integer >= 0; default 0. */
  seed?: number;
  /** Also return each token's bucket per round; default false. */
  returnBuckets?: boolean;
  /** Also return, per round, the positions of the keys each query saw; default false. */
  returnAttended?: boolean;
}

/** An int32 tensor. */
export interface Int32Tensor {
  data: Int32Array;
  shape: number[];
}

export interface LshAttentionResult {
  output: Tensor;
  /** Each token's bucket in each round, shape [..., nHashes, S]. */
  buckets?: Int32Tensor;
  /**
   * [..., nHashes, S, W] with W = 2 · chunkSize (chunkSize when there is one chunk): the keys of
   * query i's window in round r (the chunk before, then its own, in sorted order), -1 for those
   * hidden (causal, or its own key when it saw another).
   */
  attended?: Int32Tensor;
}

/** A 2-layer MLP on each token, PyTorch Linear layout: W2 relu(W1 x + b1) + b2. */
export interface SynthesizerMlp {
  /** [hidden, D] */
  W1: TensorInput;
  /** [hidden] */
  b1?: TensorInput;
  /** [out, hidden] */
  W2: TensorInput;
  /** [out] */
  b2?: TensorInput;
}

/**
 * Synthesizer attention (Tay et al.): weights not from query-key products but synthesised.
 * `'dense'`: row i of the scores is `dense`(x_i) (S outputs). `'random'`: scores R [S, S], learned
 * (given) or fixed (drawn from `seed`). `'factorized-dense'`: A = factorA(x_i) [a], B =
 * factorB(x_i) [b], a · b = S, score_ij = A[j mod a] · B[floor(j / a)]. `'factorized-random'`:
 * R1 R2^T with R1, R2 [S, rank], given or drawn.
 */
export interface SynthesizerOptions {
  kind: 'dense' | 'random' | 'factorized-dense' | 'factorized-random';
  /** `'dense'`: the MLP, W2 with S rows. */
  dense?: SynthesizerMlp;
  /** `'factorized-dense'`: the two MLPs, output sizes a and b with a · b = S. */
  factorA?: SynthesizerMlp;
  factorB?: SynthesizerMlp;
  /** `'random'`: a learned R [S, S]; default a fixed one drawn from `seed` (N(0, 1)). */
  R?: TensorInput;
  /** `'factorized-random'`: learned R1, R2 [S, rank]; default fixed ones drawn from `seed`. */
  R1?: TensorInput;
  R2?: TensorInput;
  /** `'factorized-random'` without R1, R2: their columns; default 8. */
  rank?: number;
  /** Seed of the fixed random forms, an integer >= 0; default 0. */
  seed?: number;
  /**
   * The paper's mixture with dot-product attention: scores (1 - weight) · synthesised + weight ·
   * q · k / sqrt(D), q and k [..., S, D]. weight in (0, 1], default 0.5.
   */
  dot?: { q: TensorInput; k: TensorInput; weight?: number };
  /** Query i sees keys j <= i only; default false. */
  causal?: boolean;
  /** Also return the weights [..., S, S]; default false. */
  returnWeights?: boolean;
}
