"""Writes a Llama-shaped checkpoint (2-byte U16 weights, BF16-sized) of about --size GiB in --shards files with the real
safetensors package (numpy backend), fast enough for multi-GiB benchmarks:

    bench/loader/.venv/bin/python bench/loader/make_checkpoint.py --out /tmp/loader-bench-4g --size 4 --shards 4
"""

import argparse
import os

import numpy as np
import safetensors.numpy


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--size", type=float, default=4.0, help="GiB of tensor data")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--first-layer", type=int, default=0, help="to add shards to a folder")
    parser.add_argument("--first-shard", type=int, default=1)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(7)
    hidden = args.hidden
    # One layer: q, k, v, o (hidden x hidden) and gate, up, down (hidden x 2*hidden), in BF16.
    layer_bytes = 2 * (4 * hidden * hidden + 3 * 2 * hidden * hidden)
    layers = max(1, -(-int(args.size * (1 << 30)) // layer_bytes))  # at least --size
    per_shard = -(-layers // args.shards)
    for shard in range(args.shards):
        tensors = {}
        for layer in range(shard * per_shard, min(layers, (shard + 1) * per_shard)):
            prefix = f"model.layers.{args.first_layer + layer}"
            shapes = {
                "self_attn.q_proj.weight": (hidden, hidden),
                "self_attn.k_proj.weight": (hidden, hidden),
                "self_attn.v_proj.weight": (hidden, hidden),
                "self_attn.o_proj.weight": (hidden, hidden),
                "mlp.gate_proj.weight": (2 * hidden, hidden),
                "mlp.up_proj.weight": (2 * hidden, hidden),
                "mlp.down_proj.weight": (hidden, 2 * hidden),
            }
            for name, shape in shapes.items():
                tensors[f"{prefix}.{name}"] = rng.integers(0, 1 << 16, size=shape, dtype=np.uint16)
            tensors[f"{prefix}.input_layernorm.weight"] = np.ones(hidden, dtype=np.float32)
        path = os.path.join(args.out, f"model-{args.first_shard + shard:05d}.safetensors")
        safetensors.numpy.save_file(tensors, path)
        print(path, os.path.getsize(path))


if __name__ == "__main__":
    main()
