"""GPT-2 124M-shaped random weights (std 0.02, seeded) written twice, for tests/bench/pretrained.bench.mjs:
as config.json + model.safetensors (F32) for attnlab's loadModel, and as an ONNX graph of the
same forward (tests/pretrained/reference.py's gpt2, ids [S] -> logits [S, 50257]) for
onnxruntime-web, as Transformer Explainer runs GPT-2. ~500 MB each, into build/bench-pretrained/.
    /usr/bin/python3 tests/bench/pretrained_onnx.py
"""
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pretrained"))
import make_fixtures  # noqa: E402
import reference as ref  # noqa: E402

OUT = os.path.join(HERE, "..", "..", "build", "bench-pretrained")
CFG = {"architectures": ["GPT2LMHeadModel"], "vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12, "n_head": 12}


class Gpt2(torch.nn.Module):
    def __init__(self, weights):
        super().__init__()
        self.names = list(weights)
        for i, k in enumerate(self.names):
            self.register_parameter(f"p{i}", torch.nn.Parameter(weights[k], requires_grad=False))

    def forward(self, ids):
        t = {k: getattr(self, f"p{i}") for i, k in enumerate(self.names)}
        return ref.gpt2(t, CFG, ids)[0]


def main():
    os.makedirs(OUT, exist_ok=True)
    g = torch.Generator().manual_seed(124)
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
    with open(os.path.join(OUT, "config.json"), "w") as f:
        json.dump(CFG, f)
    make_fixtures.write_safetensors(os.path.join(OUT, "model.safetensors"), {k: (v, "F32") for k, v in w.items()})
    m = Gpt2(w).eval()
    ids = torch.arange(128) * 37 % 50257
    with torch.no_grad():
        torch.onnx.export(m, (ids,), os.path.join(OUT, "gpt2.onnx"), input_names=["ids"], output_names=["logits"],
                          dynamic_axes={"ids": {0: "S"}, "logits": {0: "S"}}, opset_version=14)
        logits = m(ids)
    torch.save({"ids": ids, "logits": logits[-4:]}, os.path.join(OUT, "check.pt"))
    with open(os.path.join(OUT, "check.json"), "w") as f:
        json.dump({"ids": ids.tolist(), "last_logits": logits[-1, :16].tolist()}, f)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
