import { load } from 'attnlab';
import { readFileSync } from 'node:fs';
const lib = await load({ variant: 'simd' });
const s = 'Je pense que nous devrions partir avant la nuit tombée.';
const tr = await lib.loadTranslator(readFileSync(process.argv[2]));
for (const beam of [1, 5]) {
  for (let i = 0; i < 10; i++) tr.translate(s, { beam });
  const c = [], w = [];
  for (let i = 0; i < 60; i++) { const c0 = process.cpuUsage(); const t0 = performance.now(); tr.translate(s, { beam }); w.push(performance.now() - t0); const d = process.cpuUsage(c0); c.push((d.user + d.system) / 1000); }
  c.sort((a, b) => a - b); w.sort((a, b) => a - b);
  console.log('beam', beam, 'CPU median ms', c[30].toFixed(2), 'wall median', w[30].toFixed(2), '|', tr.translate(s, { beam }).text);
}
