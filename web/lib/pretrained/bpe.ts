// GPT-2's byte-level BPE, as openai/gpt-2's src/encoder.py defines it (and Hugging Face's
// GPT2Tokenizer repeats): the text is cut by GPT-2's pre-tokenizer pattern, each piece's UTF-8
// bytes are spelled with bytes_to_unicode's printable stand-ins, then the ranked merges apply,
// lowest rank first, until none is left. Vocabulary and merges come from vocab.json + merges.txt
// or from a tokenizer.json (model.type "BPE").
import { argError } from '../errors.js';

// encoder.py's pattern; JavaScript's \p{L} / \p{N} are the Unicode classes of the `regex` module's.
const PATTERN = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/** encoder.py's bytes_to_unicode: byte -> a printable character (printable bytes map to themselves). */
function bytesToUnicode(): string[] {
  const bs: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const table: string[] = new Array(256);
  let n = 0;
  for (let b = 0; b < 256; b++) table[b] = String.fromCharCode(bs.includes(b) ? b : 256 + n++);
  return table;
}

export class ByteLevelBpe {
  readonly kind = 'bpe' as const;
  private readonly byteToChar = bytesToUnicode();
  private readonly charToByte = new Map<string, number>(this.byteToChar.map((c, b) => [c, b]));
  private readonly ranks = new Map<string, number>();
  private readonly tokens: string[] = [];
  private readonly cache = new Map<string, number[]>();
  private readonly encoder: Map<string, number>;
  private readonly utf8 = new TextEncoder();

  /** `vocab`: token -> id (vocab.json); `merges`: "a b" lines or [a, b] pairs in rank order. */
  constructor(vocab: Record<string, number>, merges: readonly (string | readonly [string, string])[]) {
    this.encoder = new Map(Object.entries(vocab));
    for (const [t, id] of this.encoder) {
      if (!Number.isInteger(id) || id < 0) throw argError('ByteLevelBpe', `vocab[${JSON.stringify(t)}]`, 'a non-negative integer id', id);
      this.tokens[id] = t;
    }
    merges.forEach((m, rank) => {
      const pair = typeof m === 'string' ? m.split(' ') : m;
      if (pair.length !== 2) throw argError('ByteLevelBpe', `merges[${rank}]`, 'two symbols separated by one space', m);
      const key = pair[0] + ' ' + pair[1];
      if (!this.ranks.has(key)) this.ranks.set(key, rank);
    });
  }

  /** merges.txt's text: an optional "#version" line, then one "a b" pair per line. */
  static fromFiles(vocabJson: string, mergesTxt: string): ByteLevelBpe {
    const lines = mergesTxt.split('\n').map((l) => l.replace(/\r$/, ''));
    const merges = lines.filter((l, i) => l.length > 0 && !(i === 0 && l.startsWith('#version')));
    return new ByteLevelBpe(JSON.parse(vocabJson) as Record<string, number>, merges);
  }

  get vocabSize(): number {
    return this.tokens.length;
  }

  private bpe(piece: string): number[] {
    const hit = this.cache.get(piece);
    if (hit) return hit;
    let word = Array.from(piece);
    while (word.length > 1) {
      let best = -1, bestRank = Infinity;
      for (let i = 0; i < word.length - 1; i++) {
        const r = this.ranks.get(word[i] + ' ' + word[i + 1]);
        if (r !== undefined && r < bestRank) (bestRank = r), (best = i);
      }
      if (best < 0) break;
      // Merge every occurrence of the best pair, left to right (encoder.py's loop).
      const a = word[best], b = word[best + 1], next: string[] = [];
      for (let i = 0; i < word.length; ) {
        if (i < word.length - 1 && word[i] === a && word[i + 1] === b) (next.push(a + b), (i += 2));
        else next.push(word[i++]);
      }
      word = next;
    }
    const ids = word.map((t) => {
      const id = this.encoder.get(t);
      if (id === undefined) throw new Error(`tokenize: the vocabulary has no token ${JSON.stringify(t)} (incomplete vocab.json?)`);
      return id;
    });
    if (this.cache.size < 100_000) this.cache.set(piece, ids);
    return ids;
  }

  encode(text: string): number[] {
    if (typeof text !== 'string') throw argError('tokenize', 'text', 'a string', text);
    const out: number[] = [];
    for (const m of text.matchAll(PATTERN)) {
      let s = '';
      for (const b of this.utf8.encode(m[0])) s += this.byteToChar[b];
      for (const id of this.bpe(s)) out.push(id);
    }
    return out;
  }

  /** The token's text as it reads (its bytes decoded; a partial UTF-8 sequence shows as U+FFFD). */
  token(id: number): string {
    return this.decode([id]);
  }

  decode(ids: readonly number[]): string {
    const bytes: number[] = [];
    for (const id of ids) {
      const t = this.tokens[id];
      if (t === undefined) throw argError('decode', 'ids', `token ids in [0, ${this.tokens.length})`, id);
      for (const c of t) bytes.push(this.charToByte.get(c) ?? 0x3f);
    }
    return new TextDecoder().decode(new Uint8Array(bytes));
  }
}
