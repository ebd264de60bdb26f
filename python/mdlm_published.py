# SPDX-License-Identifier: GPL-3.0-or-later
"""MDLM checkpoints in their published layout, and their logits, without MDLM's code (flash-attn,
einops and huggingface_hub are not packaged for Debian 12): a reference written from
kuleshov-group/mdlm's DIT (models/dit.py) and its Hugging Face release (class MDLM, the network
under "backbone."), computed in float64, that d2dpo's native network is held to.

    python3 python/mdlm_published.py write DIR --size tiny [--prefix backbone.] [--time-conditioning]
        writes DIR/model.safetensors and config.json with random weights in MDLM's layout, and a
        vocab.txt: MDLM's text8 character tokenizer (a token a line, [MASK] at id 4)
    python3 python/mdlm_published.py logits DIR OUT.safetensors [--ids IN.safetensors | --batch B --length L]
        writes the ids, the sigmas and the full logits [B, L, V] that MDLM's backbone computes
    python3 python/mdlm_published.py recount SAMPLES.txt --composition ae
        prints the task's metrics recounted from an export's samples (VSR, the composition share)
"""
import argparse
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from esm_published import read_safetensors, recount, write_safetensors  # noqa: E402

# name: (blocks, hidden, heads, cond_dim); "small" is MDLM's released width (configs/model/small.yaml)
SIZES = {"tiny": (2, 64, 4, 32), "medium-narrow": (4, 256, 8, 64), "small": (12, 768, 12, 128)}
# MDLM's Text8Tokenizer: its special tokens, then the characters
TOKENS = ["[CLS]", "[SEP]", "[BOS]", "[EOS]", "[MASK]", "[PAD]", "[RESERVED]", "[UNK]"] + list("abcdefghijklmnopqrstuvwxyz ")
LETTERS = "abcdefghijklmnopqrstuvwxyz"
MASK = TOKENS.index("[MASK]")


def config_for(size, time_conditioning=False, length=1024):
    blocks, hidden, heads, cond = SIZES[size]
    # MDLMConfig as the Hugging Face release writes it (no mask id: [MASK] is in vocab.txt)
    return {"architectures": ["MDLM"], "model_type": "mdlm", "vocab_size": len(TOKENS), "model_length": length,
            "hidden_dim": hidden, "cond_dim": cond, "n_blocks": blocks, "n_heads": heads, "dropout": 0.1,
            "time_conditioning": time_conditioning, "return_dict": False}


def random_weights(config, seed):
    g = torch.Generator().manual_seed(seed)
    e, c, v, ff = config["hidden_dim"], config["cond_dim"], config["vocab_size"], 4 * config["hidden_dim"]
    width = e // config["n_heads"]

    def normal(*shape, std=0.02):
        return torch.randn(*shape, generator=g) * std

    w = {"vocab_embed.embedding": normal(v, e, std=1.0),
         "sigma_map.mlp.0.weight": normal(c, 256, std=1 / 16), "sigma_map.mlp.0.bias": normal(c, std=0.1),
         "sigma_map.mlp.2.weight": normal(c, c, std=1 / math.sqrt(c)), "sigma_map.mlp.2.bias": normal(c, std=0.1),
         "rotary_emb.inv_freq": 1.0 / (10000 ** (torch.arange(0, width, 2).float() / width))}
    for i in range(config["n_blocks"]):
        p = f"blocks.{i}."
        w[p + "norm1.weight"] = 1 + normal(e, std=0.1)
        w[p + "attn_qkv.weight"] = normal(3 * e, e, std=1.5 / math.sqrt(e))
        w[p + "attn_out.weight"] = normal(e, e, std=1 / math.sqrt(e))
        w[p + "norm2.weight"] = 1 + normal(e, std=0.1)
        w[p + "mlp.0.weight"] = normal(ff, e, std=1 / math.sqrt(e))
        w[p + "mlp.0.bias"] = normal(ff)
        w[p + "mlp.2.weight"] = normal(e, ff, std=1 / math.sqrt(ff))
        w[p + "mlp.2.bias"] = normal(e)
        # adaLN starts at zero in training; trained weights are not, and zeros would hide its arithmetic
        w[p + "adaLN_modulation.weight"] = normal(6 * e, c, std=0.2 / math.sqrt(c))
        w[p + "adaLN_modulation.bias"] = normal(6 * e, std=0.2)
    w["output_layer.norm_final.weight"] = 1 + normal(e, std=0.1)
    w["output_layer.linear.weight"] = normal(v, e, std=1 / math.sqrt(e))
    w["output_layer.linear.bias"] = normal(v, std=0.1)
    w["output_layer.adaLN_modulation.weight"] = normal(2 * e, c, std=0.2 / math.sqrt(c))
    w["output_layer.adaLN_modulation.bias"] = normal(2 * e, std=0.2)
    return w


def write(folder, size, seed=0, prefix="backbone.", time_conditioning=False, length=1024, vocab=True):
    os.makedirs(folder, exist_ok=True)
    config = config_for(size, time_conditioning, length)
    weights = random_weights(config, seed)
    write_safetensors(os.path.join(folder, "model.safetensors"), {prefix + k: t for k, t in weights.items()},
                      {"format": "pt"})
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    if vocab:
        with open(os.path.join(folder, "vocab.txt"), "w") as f:
            f.write("\n".join(TOKENS) + "\n")


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def dit_logits(config, weights, ids, sigma, prefix="backbone."):
    """MDLM's DIT.forward(ids, sigma) in eval mode (dropout off), in float64. flash-attn's rotary
    (non-interleaved, on q and k) and its attention (scale 1/sqrt(head width)) written out."""
    p = lambda name: weights[prefix + name].double()
    e, heads = config["hidden_dim"], config["n_heads"]
    width = e // heads
    b, n = ids.shape
    ln = lambda x, name: F.layer_norm(x, (e,)) * p(name)
    x = p("vocab_embed.embedding")[ids]
    # TimestepEmbedder: frequencies and arguments in float32, as there
    half = 128
    freqs = torch.exp(-math.log(10000) * torch.arange(0, half, dtype=torch.float32) / half)
    args = sigma[:, None].float() * freqs[None]
    t_freq = torch.cat([torch.cos(args), torch.sin(args)], -1).double()
    c = F.silu(F.linear(F.silu(F.linear(t_freq, p("sigma_map.mlp.0.weight"), p("sigma_map.mlp.0.bias"))),
                        p("sigma_map.mlp.2.weight"), p("sigma_map.mlp.2.bias")))
    # Rotary: inv_freq and the angles in float32, as its buffer is
    inv_freq = 1.0 / (10000 ** (torch.arange(0, width, 2).float() / width))
    emb = torch.cat([torch.outer(torch.arange(n).float(), inv_freq)] * 2, -1)
    cos, sin = emb.cos().double()[None, :, None], emb.sin().double()[None, :, None]
    for i in range(config["n_blocks"]):
        q_ = f"blocks.{i}."
        mod = F.linear(c, p(q_ + "adaLN_modulation.weight"), p(q_ + "adaLN_modulation.bias"))[:, None]
        shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = mod.chunk(6, dim=2)
        h = ln(x, q_ + "norm1.weight") * (1 + scale_msa) + shift_msa
        qkv = F.linear(h, p(q_ + "attn_qkv.weight")).view(b, n, 3, heads, width)
        q, k, v = qkv.unbind(2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(width), -1) @ v
        x = x + gate_msa * F.linear(att.transpose(1, 2).reshape(b, n, e), p(q_ + "attn_out.weight"))
        h = ln(x, q_ + "norm2.weight") * (1 + scale_mlp) + shift_mlp
        up = F.gelu(F.linear(h, p(q_ + "mlp.0.weight"), p(q_ + "mlp.0.bias")), approximate="tanh")
        x = x + gate_mlp * F.linear(up, p(q_ + "mlp.2.weight"), p(q_ + "mlp.2.bias"))
    shift, scale = F.linear(c, p("output_layer.adaLN_modulation.weight"),
                            p("output_layer.adaLN_modulation.bias"))[:, None].chunk(2, dim=2)
    x = ln(x, "output_layer.norm_final.weight") * (1 + scale) + shift
    return F.linear(x, p("output_layer.linear.weight"), p("output_layer.linear.bias"))


def load(folder):
    with open(os.path.join(folder, "config.json")) as f:
        config = json.load(f)
    weights = read_safetensors(os.path.join(folder, "model.safetensors"))
    prefix = "backbone." if all(k.startswith("backbone.") for k in weights) else ""
    return config, weights, prefix


def random_ids(batch, length, seed):
    """Letters, a third of them [MASK], one row mostly masked; sigmas across MDLM's range."""
    g = torch.Generator().manual_seed(seed)
    letter_ids = torch.tensor([TOKENS.index(ch) for ch in LETTERS])
    ids = letter_ids[torch.randint(0, len(LETTERS), (batch, length), generator=g)]
    ids = torch.where(torch.rand(batch, length, generator=g) < 0.35, torch.tensor(MASK), ids)
    ids[0, : length // 2] = MASK
    sigma = -torch.log1p(-(1 - 1e-3) * torch.rand(batch, generator=g))
    return ids, sigma


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write")
    w.add_argument("folder")
    w.add_argument("--size", choices=SIZES, default="tiny")
    w.add_argument("--seed", type=int, default=0)
    w.add_argument("--prefix", default="backbone.")
    w.add_argument("--time-conditioning", action="store_true")
    w.add_argument("--model-length", type=int, default=1024)
    w.add_argument("--no-vocab", action="store_true")
    lg = sub.add_parser("logits")
    lg.add_argument("folder")
    lg.add_argument("out")
    lg.add_argument("--ids", help="a safetensors file with 'ids' [B, L] and 'sigma' [B]")
    lg.add_argument("--batch", type=int, default=2)
    lg.add_argument("--length", type=int, default=50)
    lg.add_argument("--seed", type=int, default=1)
    rc = sub.add_parser("recount")
    rc.add_argument("samples")
    rc.add_argument("--composition", required=True, help="the letters of the composition rule, e.g. ae")
    a = parser.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    if a.command == "write":
        write(a.folder, a.size, a.seed, a.prefix, a.time_conditioning, a.model_length, not a.no_vocab)
    elif a.command == "logits":
        config, weights, prefix = load(a.folder)
        if a.ids:
            given = read_safetensors(a.ids)
            ids, sigma = given["ids"].long(), given["sigma"].double()
        else:
            ids, sigma = random_ids(a.batch, a.length, a.seed)
        with torch.no_grad():
            logits = dit_logits(config, weights, ids, sigma, prefix)
        write_safetensors(a.out, {"ids": ids.long(), "sigma": sigma.double(), "logits": logits.double()})
    else:
        recount(a.samples, a.composition, LETTERS)


if __name__ == "__main__":
    sys.exit(main())
