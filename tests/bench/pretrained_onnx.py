"""Random-weight checkpoints the shape of public models, written twice for
tests/bench/pretrained.bench.mjs: config.json + model.safetensors (F32) for attnlab's loadModel, and
model.onnx, an ONNX graph of the same forward (tests/pretrained/reference.py; ids [S] -> logits
[S, vocab]) for onnxruntime-web, as Transformer Explainer runs GPT-2. Into build/bench-pretrained/<name>/:
  gpt2         GPT2LMHeadModel, openai-community/gpt2's shape (124M; weights std 0.02 as GPT-2's init)
  tinystories  GPTNeoForCausalLM, roneneldan/TinyStories-33M's shape (768 wide, 4 layers, 16 heads,
               global/local attention with a 256-token window)
  bert         BertForMaskedLM, bert-base-uncased's shape (110M)
    /usr/bin/python3 tests/bench/pretrained_onnx.py [name ...]   (default: all three)
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pretrained"))
import make_fixtures  # noqa: E402
import reference as ref  # noqa: E402

ROOT = os.path.join(HERE, "..", "..", "build", "bench-pretrained")

GPT2 = {"architectures": ["GPT2LMHeadModel"], "vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12, "n_head": 12}
NEO = {"architectures": ["GPTNeoForCausalLM"], "model_type": "gpt_neo", "vocab_size": 50257, "max_position_embeddings": 2048,
       "hidden_size": 768, "num_layers": 4, "num_heads": 16, "intermediate_size": None, "window_size": 256,
       "attention_types": [[["global", "local"], 2]], "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}
BERT = {"architectures": ["BertForMaskedLM"], "model_type": "bert", "vocab_size": 30522, "hidden_size": 768,
        "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072, "hidden_act": "gelu",
        "max_position_embeddings": 512, "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0}


def gpt2_weights(g):
    E, I = 768, 3072
    w = {"wte.weight": torch.randn(50257, E, generator=g) * 0.02, "wpe.weight": torch.randn(1024, E, generator=g) * 0.01}
    for l in range(12):
        h = f"h.{l}."
        for n, shape in (("attn.c_attn", (E, 3 * E)), ("attn.c_proj", (E, E)), ("mlp.c_fc", (E, I)), ("mlp.c_proj", (I, E))):
            w[h + n + ".weight"] = torch.randn(*shape, generator=g) * 0.02
            w[h + n + ".bias"] = torch.zeros(shape[1])
        for n in ("ln_1", "ln_2"):
            w[h + n + ".weight"] = torch.ones(E)
            w[h + n + ".bias"] = torch.zeros(E)
    w["ln_f.weight"], w["ln_f.bias"] = torch.ones(E), torch.zeros(E)
    return w


def scaled(w, std):
    """make_fixtures' float64 weights (std 0.1-0.3, for 32-wide models) as float32, scaled so
    768-wide layers keep activations in range."""
    return {k: (v * std if v.dim() == 2 else v).float() for k, v in w.items()}


MODELS = {
    "gpt2": (GPT2, lambda g: gpt2_weights(g), lambda t, ids: ref.gpt2(t, GPT2, ids)[0]),
    "tinystories": (NEO, lambda g: scaled(make_fixtures.neo_weights(g, NEO), 0.15),
                    lambda t, ids: ref.gpt_neo(t, NEO, ids, ["global", "local"] * 2)[0]),
    "bert": (BERT, lambda g: scaled(make_fixtures.bert_weights(g, BERT, "bert.", True, "weight"), 0.15),
             lambda t, ids: ref.bert(t, BERT, ids, torch.zeros_like(ids), "bert.", True)[0]),
}


class Forward(torch.nn.Module):
    def __init__(self, weights, run):
        super().__init__()
        self.names, self.run = list(weights), run
        for i, k in enumerate(self.names):
            self.register_parameter(f"p{i}", torch.nn.Parameter(weights[k], requires_grad=False))

    def forward(self, ids):
        return self.run({k: getattr(self, f"p{i}") for i, k in enumerate(self.names)}, ids)


def write(name):
    cfg, weights, run = MODELS[name]
    out = os.path.join(ROOT, name)
    os.makedirs(out, exist_ok=True)
    w = weights(torch.Generator().manual_seed(124))
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f)
    make_fixtures.write_safetensors(os.path.join(out, "model.safetensors"), {k: (v, "F32") for k, v in w.items()})
    if name == "bert":  # a WordPiece vocabulary of the right size (the benchmark passes token ids)
        with open(os.path.join(out, "vocab.txt"), "w") as f:
            f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(5, cfg["vocab_size"])]) + "\n")
    m = Forward(w, run).eval()
    ids = torch.arange(128) * 37 % cfg["vocab_size"]
    with torch.no_grad():
        torch.onnx.export(m, (ids,), os.path.join(out, "model.onnx"), input_names=["ids"], output_names=["logits"],
                          dynamic_axes={"ids": {0: "S"}, "logits": {0: "S"}}, opset_version=14)
        logits = m(ids)
    with open(os.path.join(out, "check.json"), "w") as f:
        json.dump({"ids": ids.tolist(), "last_logits": logits[-1, :16].tolist()}, f)
    print("wrote", out)


if __name__ == "__main__":
    for n in sys.argv[1:] or list(MODELS):
        write(n)
