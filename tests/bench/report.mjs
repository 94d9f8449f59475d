// The markdown report of a benchmark run: every peer's median time and GFLOP/s per shape, then
// the ratios the targets are stated in.

const jobName = (j) => `${j.causal ? 'causal ' : ''}H${j.H} S${j.S}`;
const key = (j) => `${j.H}/${j.S}/${j.causal}`;
const fmt = (x, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : '-');

function cell(row, tolerance) {
  if (!row) return '-';
  if (row.error) return 'failed';
  const ok = row.maxError <= tolerance ? '' : ` ✗ err ${row.maxError.toExponential(1)}`;
  return `${fmt(row.ms, row.ms < 10 ? 2 : 1)} / ${fmt(row.gflops)}${ok}`;
}

function find(results, name, threads) {
  return results.peers.find((p) => p.name === name && p.threads === threads);
}

function rowOf(peer, job) {
  return peer?.rows.find((r) => key(r) === key(job) && !r.error && r.maxError <= Infinity);
}

export function markdown(results) {
  const jobs = results.peers.find((p) => p.rows.length)?.rows ?? [];
  const out = [];
  const m = results.machine;
  out.push(`# attnlab benchmark, ${results.date.slice(0, 10)}`, '');
  out.push(`- machine: ${m.cpu}, ${m.cores} cores; Node ${m.node} (V8 ${m.v8}); ${m.emscripten ?? ''}`);
  out.push(`- packages: ${Object.entries(results.packages).map(([k, v]) => `${k} ${v}`).join(', ')}${results.source ? `; attnlab at commit ${results.source}` : ''}`);
  out.push(`- float32, d = ${results.d}; median of ${results.runs} runs after warm-up; JS Float32Array in to JS Float32Array out`);
  out.push(`- GFLOP/s = ${results.flops}; WASM SIMD128 f32x4 mul+add peak of one core: ${fmt(results.peak.gflops)} GFLOP/s (best of a run before and after the peers: ${fmt(results.peak.before)}, ${fmt(results.peak.after)})${results.peak.fma ? `; f32x4.relaxed_madd (FMA) peak: ${fmt(results.peak.fma.gflops)} GFLOP/s (${fmt(results.peak.fma.before)}, ${fmt(results.peak.fma.after)})` : ''}`);
  out.push(`- timed calls go round-robin over the peers, so load from elsewhere falls on all alike: per round each peer, ${results.settleMs ?? 0} ms after the previous one (so no peer's spinning threads slow the next), makes untimed lead-in calls for at least ${results.leadInMs ?? 0} ms and then the timed call right after them (sustained speed: threads awake, as in repeated use); the first lead-in call after each idle pause is in its own table below; 1-minute load average during the shapes: ${results.loads.map((l) => fmt(l.before)).join(', ')}`);
  out.push(`- every output checked against a float64 reference (max |err| / max(1, |ref|) <= ${results.tolerance}; S = 8192 on 256 sampled rows); ✗ marks a miss`);
  const tableHead = () => out.push(`| peer | threads | ${jobs.map(jobName).join(' | ')} |`, `|---|---|${jobs.map(() => '---|').join('')}`);
  out.push('', '## Median ms / GFLOP/s', '');
  tableHead();
  for (const p of results.peers) {
    const threads = p.info?.threads !== undefined && p.info.threads !== p.threads ? `${p.threads} (ran ${p.info.threads})` : `${p.threads}`;
    if (p.error && !p.rows.length) {
      out.push(`| ${p.name} | ${threads} | ${jobs.map(() => '-').join(' | ')} |`, '', `${p.name}, ${p.threads} threads: ${p.error}`, '');
      continue;
    }
    out.push(`| ${p.name} | ${threads} | ${jobs.map((j) => cell(p.rows.find((r) => key(r) === key(j)), results.tolerance)).join(' | ')} |`);
  }
  // Further per-peer tables: the peers with results, one cell per shape from the row's fields.
  const measured = results.peers.filter((x) => x.rows.length);
  const peerTable = (heading, intro, cellOf) => {
    if (!measured.some((p) => p.rows.some((r) => !r.error && cellOf(r) !== '-'))) return;
    out.push('', heading, '', ...(intro ? [intro, ''] : []));
    tableHead();
    for (const p of measured) {
      out.push(`| ${p.name} | ${p.threads} | ${jobs.map((j) => {
        const r = p.rows.find((x) => key(x) === key(j));
        return r && !r.error ? cellOf(r) : '-';
      }).join(' | ')} |`);
    }
  };
  peerTable(`## First call after a ${results.settleMs ?? 0} ms idle pause (each turn's first lead-in call): median ms`, null,
    (r) => (Number.isFinite(r.firstMs) ? fmt(r.firstMs, r.firstMs < 10 ? 2 : 1) : '-'));
  peerTable('## Threads at work in the timed calls: CPU time / wall time, and mean run-queue wait ms',
    'CPU time and run-queue wait of all the process\'s threads during the timed calls (Linux schedstat, summed over the calls): about 2 means two threads ran side by side the whole call; a wait means runnable threads waited for a CPU. schedstat counts running threads in scheduler ticks, so calls under 10 ms show -.',
    (r) => (Number.isFinite(r.cpuPerWall) && r.ms >= 10 ? `${fmt(r.cpuPerWall, 2)} / ${fmt(r.waitMs)}` : '-'));

  const simd1 = find(results, 'attnlab simd', 1);
  out.push('', '## Fraction of the SIMD128 mul+add peak, attnlab simd at 1 thread', '');
  out.push(`${results.roundPeaks ? 'The peak kernel also took a turn in every round, so each shape has a peak measured in the same rounds; the' : 'The'} run's best peak is ${fmt(results.peak.gflops)} GFLOP/s.`, '');
  out.push('| shape | attnlab simd GFLOP/s | peak in the same rounds GFLOP/s | fraction of it | fraction of the run\'s best peak |');
  out.push('|---|---|---|---|---|');
  for (const j of jobs) {
    const r = rowOf(simd1, j);
    const pk = results.roundPeaks?.find((x) => key(x) === key(j));
    out.push(`| ${jobName(j)} | ${r ? fmt(r.gflops) : '-'} | ${pk ? fmt(pk.gflops) : '-'} | ${r && pk ? fmt((100 * r.gflops) / pk.gflops, 0) + '%' : '-'} | ${r ? fmt((100 * r.gflops) / results.peak.gflops, 0) + '%' : '-'} |`);
  }

  relaxedSection(results, jobs, out, simd1);

  out.push('', '## Ratios (time of the peer / time of attnlab; higher is better for attnlab)', '');
  const ortNames = results.peers.filter((p) => p.kind === 'ort').map((p) => p.name);
  const fastestOrt = (threads, j) => {
    let best = null;
    for (const name of new Set(ortNames)) {
      const r = rowOf(find(results, name, threads), j);
      if (r && r.maxError <= results.tolerance && (!best || r.ms < best.ms)) best = { ...r, name };
    }
    return best;
  };
  const simd2 = find(results, 'attnlab simd-threads', 2);
  const tf1 = find(results, 'TF.js WASM', 1);
  const tf2 = find(results, 'TF.js WASM', 2);
  out.push('| shape | vs fastest ORT-web, 1 thread | vs fastest ORT-web, 2 threads | attnlab 2-thread speed-up | vs TF.js WASM, 1 thread each | vs TF.js WASM, each at its fastest |');
  out.push('|---|---|---|---|---|---|');
  const fastest = (...rows) => rows.filter(Boolean).reduce((b, r) => (!b || r.ms < b.ms ? r : b), null);
  for (const j of jobs) {
    const a1 = rowOf(simd1, j), a2 = rowOf(simd2, j), o1 = fastestOrt(1, j), o2 = fastestOrt(2, j), t1 = rowOf(tf1, j);
    const ratio = (peer, ours) => (peer && ours ? `${fmt(peer.ms / ours.ms, 2)}x${peer.name ? ` (${peer.name.replace('ORT-web ', '')})` : ''}` : '-');
    const ours = fastest(a1, a2), theirs = fastest(t1, rowOf(tf2, j));
    const best = ours && theirs ? `${fmt(theirs.ms / ours.ms, 2)}x (attnlab ${ours === a2 ? 2 : 1}, TF.js ${theirs === t1 ? 1 : 2} thread${theirs === t1 ? '' : 's'})` : '-';
    out.push(`| ${jobName(j)} | ${ratio(o1, a1)} | ${ratio(o2, a2)} | ${a1 && a2 ? fmt(a1.ms / a2.ms, 2) + 'x' : '-'} | ${ratio(t1, a1)} | ${best} |`);
  }
  if (tf1 && !tf2?.rows.some((r) => !r.error)) {
    out.push('', 'TF.js WASM could not run with 2 threads here (see above), so "each at its fastest" puts attnlab at 2 threads against TF.js at 1.');
  }
  if (results.memory) {
    const x = results.memory;
    out.push('', `Memory: H=1, S=${x.S}, d=64, causal on attnlab ${x.variant}: ${fmt(x.ms, 0)} ms, WebAssembly heap ${fmt(x.heapAfter / 2 ** 20, 0)} MB after the call (${fmt(x.heapBefore / 2 ** 20, 0)} MB before; inputs and output included; target <= 256 MB).`);
  }
  if (results.mha?.rows.length) {
    const x = results.mha;
    out.push('', `## Multi-head attention with projections (E = ${x.E}, H = ${x.H}, S = ${x.S}, B = 1)`, '');
    out.push('| attnlab | threads | MHA call ms | linear [S, E] x [E, E] ms | attention core ms | MHA / (4 linear + core) |');
    out.push('|---|---|---|---|---|---|');
    for (const r of x.rows) out.push(`| ${r.variant} | ${r.threads} | ${fmt(r.mha, 2)} | ${fmt(r.linear, 2)} | ${fmt(r.core, 2)} | ${fmt(r.mha / (4 * r.linear + r.core), 2)} |`);
  }
  if (results.native) {
    out.push('', '## Native (Google Benchmark, g++ -O3 -march=native, same kernels autovectorised) vs WASM SIMD128', '');
    out.push('| benchmark | native ms | native GFLOP/s | WASM simd ms | native speed / WASM speed |');
    out.push('|---|---|---|---|---|');
    for (const b of results.native.benchmarks ?? []) {
      const mt = /^attention\/H(\d+)\/S(\d+)\/(dense|causal)\/threads:(\d+)/.exec(b.name);
      let wasm = null;
      if (mt) {
        const j = { H: +mt[1], S: +mt[2], causal: mt[3] === 'causal' };
        wasm = rowOf(+mt[4] === 1 ? simd1 : simd2, j);
      }
      const ms = b.real_time;  // benchmarks report in ms
      out.push(`| ${b.name} | ${fmt(ms, 2)} | ${fmt(b.GFLOPs / 1e9)} | ${wasm ? fmt(wasm.ms, 2) : '-'} | ${wasm ? fmt(wasm.ms / ms, 2) + 'x' : '-'} |`);
    }
  }
  return out.join('\n') + '\n';
}

/**
 * The relaxed-SIMD builds against the SIMD128 ones (same threads, same rounds), against both peak
 * kernels measured in the same rounds, and against the fastest onnxruntime-web graph.
 */
function relaxedSection(results, jobs, out, simd1) {
  const r1 = find(results, 'attnlab relaxed-simd', 1), r2 = find(results, 'attnlab relaxed-simd-threads', 2);
  if (!r1?.rows.length && !r2?.rows.length) return;
  const simd2 = find(results, 'attnlab simd-threads', 2);
  const fastestOrt = (threads, j) => results.peers.filter((p) => p.kind === 'ort' && p.threads === threads)
    .map((p) => rowOf(p, j)).filter((r) => r && r.maxError <= results.tolerance).reduce((b, r) => (!b || r.ms < b.ms ? r : b), null);
  const ratio = (a, b) => (a && b ? `${fmt(b.ms / a.ms, 2)}x` : '-');
  out.push('', '## Relaxed SIMD (f32x4.relaxed_madd) against SIMD128', '');
  out.push('Speed-up = time of the SIMD128 build / time of the relaxed build, both timed in the same rounds; fractions of the peak kernels measured in the same rounds (mul+add: peak.c, FMA: peak.c with -DPEAK_FMA).', '');
  out.push('| shape | relaxed 1t GFLOP/s | simd 1t GFLOP/s | speed-up 1t | of FMA peak | of mul+add peak | vs fastest ORT-web 1t | speed-up 2t | vs fastest ORT-web 2t |');
  out.push('|---|---|---|---|---|---|---|---|---|');
  for (const j of jobs) {
    const a = rowOf(r1, j), s1 = rowOf(simd1, j), a2 = rowOf(r2, j), s2 = rowOf(simd2, j);
    const pk = results.roundPeaks?.find((x) => key(x) === key(j));
    const pct = (r, g) => (r && g ? `${fmt((100 * r.gflops) / g, 0)}%` : '-');
    out.push(`| ${jobName(j)} | ${a ? fmt(a.gflops) : '-'} | ${s1 ? fmt(s1.gflops) : '-'} | ${ratio(a, s1)} | ${pct(a, pk?.fmaGflops)} | ${pct(a, pk?.gflops)} | ${ratio(a, fastestOrt(1, j))} | ${ratio(a2, s2)} | ${ratio(a2, fastestOrt(2, j))} |`);
  }
}
