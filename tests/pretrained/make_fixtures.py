"""Writes the tiny checkpoints in tests/pretrained/fixtures/<name>/ (config.json, model.safetensors)
and their reference outputs (reference.safetensors: ids, types, logits, attentions) from
reference.py. Random weights, seeded; 16-bit checkpoints are referenced with their rounded weights,
in float64. Run with Debian's python3 (python3-torch): /usr/bin/python3 tests/pretrained/make_fixtures.py
"""
import json
import math
import os
import sys
import struct

import torch

import reference as ref

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures")
DT = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "I32": torch.int32}


def write_safetensors(path, tensors, dtype="F32"):
    """tensors: name -> (tensor, dtype name). The format: u64 LE header length, JSON header
    (padded with spaces to 8 bytes), the data section."""
    header, blobs, off = {}, [], 0
    for name, (t, d) in tensors.items():
        b = t.to(DT[d]).contiguous().view(torch.uint8).numpy().tobytes() if d in ("F16", "BF16") else t.to(DT[d]).contiguous().numpy().tobytes()
        header[name] = {"dtype": d, "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def rand(g, *shape, std=0.3):
    return torch.randn(*shape, generator=g, dtype=torch.float64) * std


def norm(g, t, name, E):
    t[name + ".weight"] = 1.0 + rand(g, E, std=0.1)
    t[name + ".bias"] = rand(g, E, std=0.1)


def gpt2_weights(g, cfg, prefix):
    E, V, P, L = cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"], cfg["n_layer"]
    I = cfg.get("n_inner") or 4 * E
    t = {prefix + "wte.weight": rand(g, V, E), prefix + "wpe.weight": rand(g, P, E, std=0.1)}
    for l in range(L):
        h = f"{prefix}h.{l}."
        norm(g, t, h + "ln_1", E)
        t[h + "attn.c_attn.weight"] = rand(g, E, 3 * E)
        t[h + "attn.c_attn.bias"] = rand(g, 3 * E, std=0.1)
        t[h + "attn.c_proj.weight"] = rand(g, E, E, std=0.1)
        t[h + "attn.c_proj.bias"] = rand(g, E, std=0.1)
        norm(g, t, h + "ln_2", E)
        t[h + "mlp.c_fc.weight"] = rand(g, E, I, std=0.2)
        t[h + "mlp.c_fc.bias"] = rand(g, I, std=0.1)
        t[h + "mlp.c_proj.weight"] = rand(g, I, E, std=0.1)
        t[h + "mlp.c_proj.bias"] = rand(g, E, std=0.1)
        # Old checkpoints carry the causal-mask buffer; a loader must skip it.
        t[h + "attn.bias"] = torch.tril(torch.ones(1, 1, P, P, dtype=torch.float64))
    norm(g, t, prefix + "ln_f", E)
    return t


def neo_weights(g, cfg):
    E, V, P, L = cfg["hidden_size"], cfg["vocab_size"], cfg["max_position_embeddings"], cfg["num_layers"]
    I = cfg.get("intermediate_size") or 4 * E
    p = "transformer."
    t = {p + "wte.weight": rand(g, V, E), p + "wpe.weight": rand(g, P, E, std=0.1)}
    for l in range(L):
        h = f"{p}h.{l}."
        norm(g, t, h + "ln_1", E)
        for n in ("q_proj", "k_proj", "v_proj"):
            t[h + f"attn.attention.{n}.weight"] = rand(g, E, E, std=0.15)
        t[h + "attn.attention.out_proj.weight"] = rand(g, E, E, std=0.1)
        t[h + "attn.attention.out_proj.bias"] = rand(g, E, std=0.1)
        norm(g, t, h + "ln_2", E)
        t[h + "mlp.c_fc.weight"] = rand(g, I, E, std=0.2)
        t[h + "mlp.c_fc.bias"] = rand(g, I, std=0.1)
        t[h + "mlp.c_proj.weight"] = rand(g, E, I, std=0.1)
        t[h + "mlp.c_proj.bias"] = rand(g, E, std=0.1)
    norm(g, t, p + "ln_f", E)
    return t


def bert_weights(g, cfg, prefix, mlm, ln):
    E, V, P, L, I = cfg["hidden_size"], cfg["vocab_size"], cfg["max_position_embeddings"], cfg["num_hidden_layers"], cfg["intermediate_size"]
    gw, gb = ("weight", "bias") if ln == "weight" else ("gamma", "beta")
    t = {}

    def nrm(name):
        t[f"{name}.{gw}"] = 1.0 + rand(g, E, std=0.1)
        t[f"{name}.{gb}"] = rand(g, E, std=0.1)

    def lin(name, i, o, std=0.2):
        t[name + ".weight"] = rand(g, o, i, std=std)
        t[name + ".bias"] = rand(g, o, std=0.1)

    e = prefix + "embeddings."
    t[e + "word_embeddings.weight"] = rand(g, V, E)
    t[e + "position_embeddings.weight"] = rand(g, P, E, std=0.1)
    t[e + "token_type_embeddings.weight"] = rand(g, cfg["type_vocab_size"], E, std=0.1)
    nrm(e + "LayerNorm")
    for l in range(L):
        h = f"{prefix}encoder.layer.{l}."
        for n in ("query", "key", "value"):
            lin(h + "attention.self." + n, E, E, 0.3)
        lin(h + "attention.output.dense", E, E)
        nrm(h + "attention.output.LayerNorm")
        lin(h + "intermediate.dense", E, I)
        lin(h + "output.dense", I, E, 0.1)
        nrm(h + "output.LayerNorm")
    t[prefix + "pooler.dense.weight"] = rand(g, E, E)  # read by no forward here; must be skipped
    t[prefix + "pooler.dense.bias"] = rand(g, E)
    if mlm:
        lin("cls.predictions.transform.dense", E, E)
        nrm("cls.predictions.transform.LayerNorm")
        t["cls.predictions.bias"] = rand(g, V, std=0.1)
    return t


def rounded(t, dtype):
    return {k: v.to(DT[dtype]).to(torch.float64) for k, v in t.items()}


def save(name, cfg, weights, dtype, ids, types, run):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    write_safetensors(os.path.join(d, "model.safetensors"), {k: (v, dtype) for k, v in weights.items()})
    logits, att = run(rounded(weights, dtype), ids, types)
    write_safetensors(os.path.join(d, "reference.safetensors"), {
        "ids": (torch.tensor(ids), "I32"),
        "types": (torch.tensor(types), "I32"),
        "logits": (logits, "F32"),
        "attentions": (att, "F32"),
    })
    top = logits.argmax(-1).tolist()
    print(f"{name}: {dtype}, {sum(v.numel() for v in weights.values())} parameters, top-1 {top}")


def main():
    g = torch.Generator().manual_seed(16)
    S = 12
    ids = [int(i) for i in torch.randint(0, 96, (S,), generator=g)]
    zeros = [0] * S

    gcfg = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": 96, "n_positions": 32,
            "n_embd": 32, "n_layer": 2, "n_head": 4, "n_inner": None, "layer_norm_epsilon": 1e-5,
            "activation_function": "gelu_new"}
    w = gpt2_weights(g, gcfg, "")
    save("gpt2-f32", gcfg, w, "F32", ids, zeros, lambda t, i, _: ref.gpt2(t, gcfg, i, ""))

    # Fine-tune layout: transformer.* and an explicit (tied, equal) lm_head.weight, in F16.
    w = gpt2_weights(g, gcfg, "transformer.")
    w["lm_head.weight"] = w["transformer.wte.weight"].clone()
    save("gpt2-prefixed-f16", gcfg, w, "F16", ids, zeros, lambda t, i, _: ref.gpt2(t, gcfg, i, "transformer."))

    ncfg = {"architectures": ["GPTNeoForCausalLM"], "model_type": "gpt_neo", "vocab_size": 96,
            "max_position_embeddings": 32, "hidden_size": 32, "num_layers": 2, "num_heads": 4,
            "intermediate_size": None, "window_size": 4, "attention_types": [[["global", "local"], 1]],
            "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}
    w = neo_weights(g, ncfg)
    save("gpt-neo-f32", ncfg, w, "F32", ids, zeros, lambda t, i, _: ref.gpt_neo(t, ncfg, i, ["global", "local"]))

    bcfg = {"architectures": ["BertForMaskedLM"], "model_type": "bert", "vocab_size": 80, "hidden_size": 32,
            "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64, "hidden_act": "gelu",
            "max_position_embeddings": 32, "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0}
    bids = [int(i) for i in torch.randint(0, 80, (S,), generator=g)]
    btypes = [0] * 7 + [1] * 5
    w = bert_weights(g, bcfg, "bert.", True, "weight")
    save("bert-mlm-bf16", bcfg, w, "BF16", bids, btypes, lambda t, i, ty: ref.bert(t, bcfg, i, ty, "bert.", True))

    mcfg = dict(bcfg, architectures=["BertModel"])
    w = bert_weights(g, mcfg, "", False, "gamma")
    save("bert-model-f32", mcfg, w, "F32", bids, btypes, lambda t, i, ty: ref.bert(t, mcfg, i, ty, "", False, "gamma"))


def tokenizer_files():
    """Small tokenizers matching the fixtures' vocabularies, so loadModel's tokenizer paths run:
    GPT-2 byte-level BPE as vocab.json + merges.txt (gpt2-*) and as tokenizer.json (gpt-neo),
    WordPiece as vocab.txt (bert-mlm) and tokenizer.json (bert-model). 96 / 80 tokens."""
    # 93 printable ASCII characters (! .. }), the space stand-in, and two merges.
    bpe = [chr(c) for c in range(0x21, 0x7E)] + ["\u0120", "\u0120t", "he"]
    vocab = {t: i for i, t in enumerate(bpe)}
    merges = ["\u0120 t", "h e"]
    for name in ("gpt2-f32", "gpt2-prefixed-f16"):
        with open(os.path.join(OUT, name, "vocab.json"), "w") as f:
            json.dump(vocab, f, ensure_ascii=False)
        with open(os.path.join(OUT, name, "merges.txt"), "w") as f:
            f.write("#version: 0.2\n" + "\n".join(merges) + "\n")
    with open(os.path.join(OUT, "gpt-neo-f32", "tokenizer.json"), "w") as f:
        json.dump({"model": {"type": "BPE", "vocab": vocab, "merges": merges}}, f, ensure_ascii=False)
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "!", "?", "'"]
    words += [chr(c) for c in range(ord("a"), ord("z") + 1)] + ["##" + chr(c) for c in range(ord("a"), ord("z") + 1)]
    words += ["the", "cat", "sat", "on", "mat", "dog", "ran", "a", "big", "red", "paris", "is", "capital", "of", "france",
              "un", "##aff", "##able"]
    words = list(dict.fromkeys(words))[:80]
    while len(words) < 80:
        words.append(f"[unused{len(words)}]")
    with open(os.path.join(OUT, "bert-mlm-bf16", "vocab.txt"), "w") as f:
        f.write("\n".join(words) + "\n")
    with open(os.path.join(OUT, "bert-model-f32", "tokenizer.json"), "w") as f:
        json.dump({"normalizer": {"type": "BertNormalizer", "lowercase": True},
                   "model": {"type": "WordPiece", "vocab": {w: i for i, w in enumerate(words)}}}, f)


def fuzz_corpus():
    """Seeds for cpp/fuzz/fuzz_safetensors.cpp: the micro GPT-2 it loads, in each dtype, and
    header-only files."""
    d = os.path.join(HERE, "..", "fuzz", "corpus", "safetensors")
    os.makedirs(d, exist_ok=True)
    g = torch.Generator().manual_seed(1)
    cfg = {"vocab_size": 4, "n_positions": 4, "n_embd": 4, "n_layer": 1, "n_head": 1, "n_inner": 4}
    w = gpt2_weights(g, cfg, "")
    w = {k: v for k, v in w.items() if not k.endswith("attn.bias")}
    for dt in ("F32", "F16", "BF16"):
        write_safetensors(os.path.join(d, f"micro-gpt2-{dt.lower()}"), {k: (v, dt) for k, v in w.items()})
    write_safetensors(os.path.join(d, "one-tensor"), {"wte.weight": (w["wte.weight"], "F32")})
    write_safetensors(os.path.join(d, "empty"), {})


def full_vocab(out, ids):
    """A GPT-2 with the full 50,257-token vocabulary (tiny otherwise: 32 wide, 2 layers), made at
    test time by tests/js/pretrained-full-vocab.test.ts (6.6 MB in F32: too big to commit), with
    its reference outputs for `ids` (GPT-2's own tokenization of the test's text)."""
    g = torch.Generator().manual_seed(50257)
    cfg = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": 50257, "n_positions": 64,
           "n_embd": 32, "n_layer": 2, "n_head": 4, "n_inner": None, "layer_norm_epsilon": 1e-5,
           "activation_function": "gelu_new"}
    global OUT
    OUT = out
    save(".", cfg, gpt2_weights(g, cfg, ""), "F32", ids, [0] * len(ids), lambda t, i, _: ref.gpt2(t, cfg, i, ""))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--full-vocab":
        full_vocab(sys.argv[2], [int(i) for i in sys.argv[3].split(",")])
    else:
        main()
        tokenizer_files()
        fuzz_corpus()
