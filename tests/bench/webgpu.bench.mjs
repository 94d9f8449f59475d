// WebGPU against WebAssembly: attention (d = 64, batch 1) for the performance issue's shapes,
// causal and not. Times whole API calls as a user sees them: WebGPU includes upload, the fused
// kernel and read-back; WebAssembly runs the threaded SIMD build. Writes JSON and markdown to
// tests/bench/results/. Needs dist/ (npm run build).
//
// Which GPU: the system's Vulkan drivers when they offer an adapter (or VK_ICD_FILENAMES, when
// set), else Chromium's SwiftShader, a CPU emulation whose timings say nothing about GPUs.
//   npm run bench:webgpu [-- --reps N]
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { create } from 'webgpu';
import { load } from 'attnlab';

const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';
// The performance issue's shapes. H1 S8192 runs only on a real GPU: on SwiftShader one call would
// take minutes (H8 S1024, a quarter of its work, takes ~19 s there) and tell nothing.
const SHAPES = [{ H: 8, S: 128 }, { H: 8, S: 512 }, { H: 8, S: 1024 }, { H: 1, S: 2048 }, { H: 1, S: 8192, gpuOnly: true }];
const D = 64;
const MIN_SECONDS = 1;  // per measurement: repeat until this long, at least 3 times
const repsArg = process.argv.indexOf('--reps');
const MAX_REPS = repsArg > 0 ? Number(process.argv[repsArg + 1]) : 20;

const root = fileURLToPath(new URL('../..', import.meta.url));
const version = (pkg) => JSON.parse(readFileSync(`${root}/node_modules/${pkg}/package.json`, 'utf8')).version;

/** A Dawn instance with an adapter: the system's first, else SwiftShader's. */
async function openGpu() {
  let gpu = create([]);
  if (await gpu.requestAdapter()) return gpu;
  if (process.env.VK_ICD_FILENAMES) throw new Error(`no WebGPU adapter with VK_ICD_FILENAMES=${process.env.VK_ICD_FILENAMES}`);
  console.log('No system Vulkan driver offers an adapter (the warnings above); using SwiftShader.');
  process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;  // read when the next instance starts
  gpu = create([]);
  if (await gpu.requestAdapter()) return gpu;
  throw new Error('no WebGPU adapter, not even SwiftShader: install chromium and libvulkan1 (scripts/setup.sh)');
}

function randn(shape, seed) {
  let a = seed >>> 0;
  const data = new Float32Array(shape.reduce((x, y) => x * y, 1));
  for (let i = 0; i < data.length; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    data[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  }
  return { data, shape };
}

/** Median milliseconds of `run` (after one untimed warm-up that compiles and allocates). */
async function time(run) {
  await run();
  const ms = [];
  const start = performance.now();
  while (ms.length < 3 || (ms.length < MAX_REPS && performance.now() - start < MIN_SECONDS * 1000)) {
    const t0 = performance.now();
    await run();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { median: ms[ms.length >> 1], min: ms[0], reps: ms.length };
}

const gpu = await openGpu();
const gpuLib = await load({ backend: 'webgpu', gpu });
const wasmLib = await load();
const adapter = gpuLib.gpuAdapter;
const swiftshader = adapter.architecture === 'swiftshader' || /swiftshader/i.test(adapter.description);

const rows = [];
const skipped = SHAPES.filter((s) => s.gpuOnly && swiftshader).map(({ H, S }) => `H${H} S${S}`);
for (const { H, S } of SHAPES.filter((s) => !(s.gpuOnly && swiftshader))) {
  for (const causal of [false, true]) {
    const q = randn([1, H, S, D], 1), k = randn([1, H, S, D], 2), v = randn([1, H, S, D], 3);
    const options = { causal };
    const gpuOut = (await gpuLib.attentionAsync(q, k, v, options)).output.data;
    const wasmOut = wasmLib.attention(q, k, v, options).output.data;
    let maxAbsError = 0;
    for (let i = 0; i < gpuOut.length; i++) maxAbsError = Math.max(maxAbsError, Math.abs(gpuOut[i] - wasmOut[i]));
    const webgpu = await time(() => gpuLib.attentionAsync(q, k, v, options));
    const wasm = await time(() => wasmLib.attention(q, k, v, options));
    // Q K^T and P V, 2 flops per multiply-add; causal does about half.
    const gflop = (4 * H * S * S * D * (causal ? 0.5 : 1)) / 1e9;
    const row = {
      H, S, d: D, causal, maxAbsError,
      webgpuMs: webgpu.median, wasmMs: wasm.median, webgpuReps: webgpu.reps, wasmReps: wasm.reps,
      webgpuGflops: gflop / (webgpu.median / 1000), wasmGflops: gflop / (wasm.median / 1000),
      speedup: wasm.median / webgpu.median,
    };
    rows.push(row);
    console.log(`H=${H} S=${S} causal=${causal}: webgpu ${row.webgpuMs.toFixed(1)} ms, wasm ${row.wasmMs.toFixed(1)} ms, max |diff| ${maxAbsError.toExponential(1)}`);
  }
}
gpuLib.dispose();
wasmLib.dispose();

let emscripten = '';
try {
  emscripten = execFileSync('emcc', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n')[0];
} catch { /* not needed to run the benchmark */ }

const date = new Date().toISOString();
const result = {
  date,
  note: swiftshader
    ? 'SwiftShader is a CPU emulation of a GPU: these WebGPU timings say nothing about WebGPU on real GPUs. The harness is ready for one: run npm run bench:webgpu on a machine whose Vulkan driver offers an adapter.'
    : 'Real GPU adapter.',
  machine: {
    cpu: os.cpus()[0]?.model ?? '', logicalCores: os.cpus().length, memoryGiB: +(os.totalmem() / 2 ** 30).toFixed(1),
    platform: `${os.platform()} ${os.release()} ${os.arch()}`, hostname: os.hostname(),
    // Other work on the machine slows both backends: worth knowing when comparing runs.
    loadAverage1m: +os.loadavg()[0].toFixed(2),
  },
  adapter: { ...adapter, swiftshader, icd: process.env.VK_ICD_FILENAMES ?? 'system' },
  versions: {
    attnlab: JSON.parse(readFileSync(`${root}/package.json`, 'utf8')).version, node: process.version,
    webgpu: version('webgpu'), emscripten,
  },
  wasm: { variant: 'simd-threads', threads: Math.min(4, os.availableParallelism?.() ?? os.cpus().length) },
  method: `median of >= 3 calls (until ${MIN_SECONDS} s, at most ${MAX_REPS}) after one warm-up; batch 1, fp32, no weights returned; WebGPU times include upload and read-back`,
  notRun: skipped,
  rows,
};

const stem = `webgpu-${date.slice(0, 10)}-${swiftshader ? 'swiftshader' : (adapter.vendor || 'gpu')}`;
const dir = `${root}/tests/bench/results`;
mkdirSync(dir, { recursive: true });
writeFileSync(`${dir}/${stem}.json`, JSON.stringify(result, null, 2) + '\n');
const md = [
  `# attnlab attention: WebGPU vs WebAssembly (${date})`,
  '',
  swiftshader ? `> **SwiftShader (CPU emulation of a GPU): the WebGPU figures below are meaningless as GPU performance.** They prove the harness runs; rerun on a real GPU.` : '> Real GPU adapter.',
  '',
  `- Machine: ${result.machine.cpu}, ${result.machine.logicalCores} logical cores, ${result.machine.memoryGiB} GiB, ${result.machine.platform}; load average ${result.machine.loadAverage1m} at the end`,
  `- Adapter: ${[adapter.vendor, adapter.architecture, adapter.device, adapter.description].filter(Boolean).join(' / ')} (ICD: ${result.adapter.icd})`,
  `- Versions: attnlab ${result.versions.attnlab}, Node ${result.versions.node}, webgpu (Dawn) ${result.versions.webgpu}${emscripten ? `, ${emscripten}` : ''}`,
  `- WebAssembly: ${result.wasm.variant}, ${result.wasm.threads} threads`,
  `- Method: ${result.method}`,
  ...(skipped.length ? [`- Not run on SwiftShader (minutes per call, meaningless): ${skipped.join(', ')}`] : []),
  '',
  '| H | S | d | causal | WebGPU ms | WASM ms | WebGPU GFLOP/s | WASM GFLOP/s | WASM / WebGPU | max abs diff |',
  '|---|---|---|---|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.H} | ${r.S} | ${r.d} | ${r.causal} | ${r.webgpuMs.toFixed(1)} | ${r.wasmMs.toFixed(1)} | ${r.webgpuGflops.toFixed(2)} | ${r.wasmGflops.toFixed(2)} | ${r.speedup.toFixed(2)} | ${r.maxAbsError.toExponential(1)} |`),
  '',
].join('\n');
writeFileSync(`${dir}/${stem}.md`, md);
console.log(`wrote tests/bench/results/${stem}.json and .md`);
