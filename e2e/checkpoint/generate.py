#!/usr/bin/env python3
"""Deterministic test checkpoint generator (Python stdlib only).

Writes a Llama-shaped safetensors model of about the requested size, split into shards, with
model.safetensors.index.json, config.json and tokenizer.json. The same (size, shards, seed)
always gives the same bytes and sha256s, so tests can pin digests.

    generate.py --out /tmp/ckpt --size 64MiB --shards 2 --seed 1 --summary
    generate.py --out /tmp/ckpt --size 1GiB --shards 4 --upload s3://modelplane/tiny/

--upload runs `s5cmd` from PATH with the S3 settings of the environment
(`eval "$(e2e/cluster.sh env)"` provides them).

safetensors layout: u64 little-endian header length N, N bytes of JSON
{"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}} padded with
spaces to a multiple of 8, then the tensor bytes, contiguous in header order.
"""

from __future__ import annotations

import argparse
import array
import hashlib
import json
import os
import random
import re
import struct
import subprocess
import sys
import time
from dataclasses import dataclass

DTYPE_BYTES = {"BF16": 2, "F32": 4}
CHUNK = 8 << 20  # generate and hash in 8 MiB pieces so memory stays flat at any model size

# Maps any byte to a BF16 high byte with sign kept and exponent in 2^-9 .. 2^-2: weights look
# like trained weights (small, finite) instead of random bits full of NaN and Inf.
_BF16_HIGH_BYTE = bytes((b & 0x80) | (0x3B + (b & 0x03)) for b in range(256))


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: str
    shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        n = DTYPE_BYTES[self.dtype]
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True)
class Architecture:
    hidden: int
    intermediate: int
    layers: int
    vocab: int
    heads: int
    kv_heads: int

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    def tensors(self) -> list[Tensor]:
        h, i, kv = self.hidden, self.intermediate, self.kv_heads * self.head_dim
        out = [Tensor("model.embed_tokens.weight", "BF16", (self.vocab, h))]
        for n in range(self.layers):
            p = f"model.layers.{n}."
            out += [
                Tensor(p + "input_layernorm.weight", "F32", (h,)),
                Tensor(p + "self_attn.q_proj.weight", "BF16", (h, h)),
                Tensor(p + "self_attn.k_proj.weight", "BF16", (kv, h)),
                Tensor(p + "self_attn.v_proj.weight", "BF16", (kv, h)),
                Tensor(p + "self_attn.o_proj.weight", "BF16", (h, h)),
                Tensor(p + "post_attention_layernorm.weight", "F32", (h,)),
                Tensor(p + "mlp.gate_proj.weight", "BF16", (i, h)),
                Tensor(p + "mlp.up_proj.weight", "BF16", (i, h)),
                Tensor(p + "mlp.down_proj.weight", "BF16", (h, i)),
            ]
        out += [
            Tensor("model.norm.weight", "F32", (h,)),
            Tensor("lm_head.weight", "BF16", (self.vocab, h)),
        ]
        return out


def choose_architecture(target_bytes: int) -> Architecture:
    """Largest hidden size whose embeddings stay under ~25% of the target with >= 2 layers."""
    best = None
    for hidden in (64, 128, 256, 512, 1024, 2048, 4096):
        vocab = 32000 if hidden >= 1024 else 8192 if hidden >= 256 else 1024
        heads = max(1, hidden // 64)
        arch = Architecture(hidden, _round_up(hidden * 11 // 4, 64), 1, vocab, heads,
                            max(1, heads // 4))
        embed = 2 * vocab * hidden * 2
        per_layer = sum(t.nbytes for t in arch.tensors()) - embed - hidden * 4
        layers = round((target_bytes - embed) / per_layer) if per_layer else 0
        if embed <= target_bytes // 4 and layers >= 2:
            best = Architecture(hidden, arch.intermediate, layers, vocab, heads, arch.kv_heads)
    if best is None:
        raise SystemExit(f"size {target_bytes} is too small for a model (use at least 1MiB)")
    return best


def _round_up(n: int, m: int) -> int:
    return (n + m - 1) // m * m


def split_shards(tensors: list[Tensor], shards: int) -> list[list[Tensor]]:
    """Keeps tensor order; starts a new shard once the running total passes its share."""
    if shards < 1 or shards > len(tensors):
        raise SystemExit(f"--shards must be between 1 and {len(tensors)}")
    total = sum(t.nbytes for t in tensors)
    out: list[list[Tensor]] = [[] for _ in range(shards)]
    done, k = 0, 0
    for idx, t in enumerate(tensors):
        want = min(shards - 1, done * shards // total)
        if out[k]:
            # Move forward at most one shard per tensor so no shard is skipped ...
            k = min(max(k, want), k + 1)
        # ... and early enough that the last shards still get a tensor each.
        k = max(k, shards - (len(tensors) - idx))
        out[k].append(t)
        done += t.nbytes
    return out


def tensor_bytes(seed: int, t: Tensor):
    """Yields the tensor's bytes in chunks; depends only on (seed, name), not on sharding."""
    if t.dtype == "F32":
        # RMSNorm weights: near 1.0, as in a trained model.
        rng = random.Random(f"{seed}:{t.name}")
        yield array.array("f", (1.0 + (rng.random() - 0.5) * 0.02 for _ in range(t.shape[0]))).tobytes()
        return
    rng = random.Random(f"{seed}:{t.name}")
    left = t.nbytes
    while left:
        n = min(CHUNK, left)
        buf = bytearray(rng.randbytes(n))
        buf[1::2] = buf[1::2].translate(_BF16_HIGH_BYTE)
        yield bytes(buf)
        left -= n


def safetensors_header(tensors: list[Tensor]) -> bytes:
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for t in tensors:
        header[t.name] = {"dtype": t.dtype, "shape": list(t.shape),
                          "data_offsets": [offset, offset + t.nbytes]}
        offset += t.nbytes
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw


def write_file(path: str, chunks) -> tuple[int, str]:
    digest, size = hashlib.sha256(), 0
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        for c in chunks:
            f.write(c)
            digest.update(c)
            size += len(c)
    os.replace(tmp, path)
    return size, digest.hexdigest()


def tokenizer_json(vocab: int) -> bytes:
    # A valid byte-level BPE tokenizer.json: 256 byte tokens, then synthetic ones up to vocab.
    tokens = {f"<0x{b:02X}>": b for b in range(256)}
    for n in range(256, vocab):
        tokens[f"\u2581t{n}"] = n
    doc = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": 0, "content": "<0x00>", "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                          "use_regex": True},
        "post_processor": None, "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "byte_fallback": True,
                  "vocab": tokens, "merges": []},
    }
    return json.dumps(doc, indent=1, sort_keys=True).encode() + b"\n"


def config_json(arch: Architecture) -> bytes:
    doc = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": arch.hidden, "intermediate_size": arch.intermediate,
        "num_hidden_layers": arch.layers, "num_attention_heads": arch.heads,
        "num_key_value_heads": arch.kv_heads, "head_dim": arch.head_dim,
        "vocab_size": arch.vocab, "max_position_embeddings": 4096, "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0, "hidden_act": "silu", "tie_word_embeddings": False,
        "torch_dtype": "bfloat16", "bos_token_id": 1, "eos_token_id": 2,
    }
    return json.dumps(doc, indent=2, sort_keys=True).encode() + b"\n"


def generate(out: str, target: int, shards: int, seed: int) -> dict:
    os.makedirs(out, exist_ok=True)
    arch = choose_architecture(target)
    groups = split_shards(arch.tensors(), shards)
    files, weight_map, total = [], {}, 0
    for k, group in enumerate(groups):
        name = f"model-{k + 1:05d}-of-{shards:05d}.safetensors"

        def chunks(group=group):
            yield safetensors_header(group)
            for t in group:
                yield from tensor_bytes(seed, t)

        size, sha = write_file(os.path.join(out, name), chunks())
        files.append({"path": name, "size": size, "sha256": sha, "role": "weights"})
        for t in group:
            weight_map[t.name] = name
            total += t.nbytes
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    extra = [
        ("model.safetensors.index.json", "index",
         json.dumps(index, indent=2, sort_keys=True).encode() + b"\n"),
        ("config.json", "config", config_json(arch)),
        ("tokenizer.json", "tokenizer", tokenizer_json(arch.vocab)),
    ]
    for name, role, data in extra:
        size, sha = write_file(os.path.join(out, name), [data])
        files.append({"path": name, "size": size, "sha256": sha, "role": role})
    return {
        "seed": seed, "shards": shards, "tensor_bytes": total,
        "total_bytes": sum(f["size"] for f in files),
        "architecture": arch.__dict__, "files": files,
    }


def verify(out: str) -> list[str]:
    """Checks every shard against the safetensors rules and the index; returns problems."""
    problems = []
    with open(os.path.join(out, "model.safetensors.index.json")) as f:
        index = json.load(f)
    seen, total = {}, 0
    for name in sorted(set(index["weight_map"].values())):
        path = os.path.join(out, name)
        with open(path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(n))
        if n % 8:
            problems.append(f"{name}: header length {n} is not a multiple of 8")
        header.pop("__metadata__", None)
        end = 0
        for tname, info in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
            begin, stop = info["data_offsets"]
            want = DTYPE_BYTES[info["dtype"]]
            for d in info["shape"]:
                want *= d
            if begin != end or stop - begin != want:
                problems.append(f"{name}: {tname} offsets {begin}..{stop} (expected {end}..{end + want})")
            end = stop
            seen[tname] = name
            total += want
        if 8 + n + end != os.path.getsize(path):
            problems.append(f"{name}: data section does not end at end of file")
    if seen != index["weight_map"]:
        problems.append("weight_map does not match the shard headers")
    if total != index["metadata"]["total_size"]:
        problems.append(f"total_size {index['metadata']['total_size']} != {total}")
    return problems


def model_revision(summary: dict, name: str, bucket: str, prefix: str, endpoint: str) -> str:
    """A ModelRevision (crds/modelrevisions.yaml) for the generated files, as YAML text.

    Written by hand (stdlib only); every scalar is a JSON string or number, valid YAML.
    """
    lines = [
        "apiVersion: modelplane.io/v1alpha1",
        "kind: ModelRevision",
        "metadata:",
        f"  name: {json.dumps(name)}",
        "spec:",
        f"  modelName: {json.dumps('modelplane-test/llama-' + str(summary['architecture']['hidden']))}",
        f"  repositoryRevision: {json.dumps('seed-' + str(summary['seed']))}",
        "  format: safetensors",
        "  engine:",
        "    name: vllm",
        '    version: "0.11.0"',
        "  sources:",
        "  - name: minio",
        "    type: objectStore",
        "    objectStore:",
        f"      endpoint: {json.dumps(endpoint)}",
        f"      bucket: {json.dumps(bucket)}",
        f"      prefix: {json.dumps(prefix)}",
        "      region: us-east-1",
        "  files:",
    ]
    for f in summary["files"]:
        lines += [
            f"  - path: {json.dumps(f['path'])}",
            f"    size: {f['size']}",
            f"    sha256: \"sha256:{f['sha256']}\"",
            f"    role: {f['role']}",
        ]
    return "\n".join(lines) + "\n"


def parse_size(text: str) -> int:
    m = re.fullmatch(r"(\d+)\s*(B|KiB|MiB|GiB|K|M|G)?", text.strip())
    if not m:
        raise argparse.ArgumentTypeError(f"bad size {text!r} (use e.g. 64MiB, 1GiB)")
    unit = {"B": 1, None: 1, "K": 1 << 10, "KiB": 1 << 10, "M": 1 << 20, "MiB": 1 << 20,
            "G": 1 << 30, "GiB": 1 << 30}[m.group(2)]
    return int(m.group(1)) * unit


def upload(out: str, url: str) -> None:
    if not url.startswith("s3://"):
        raise SystemExit("--upload wants s3://bucket/prefix/")
    url = url if url.endswith("/") else url + "/"
    # s5cmd takes endpoint and keys from S3_ENDPOINT_URL / AWS_* (cluster.sh env sets them).
    subprocess.run(["s5cmd", "cp", os.path.join(out, "*"), url], check=True,
                   stdout=subprocess.DEVNULL)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--verify", action="store_true",
                    help="only check an existing folder's shards and index; exit 1 on a problem")
    ap.add_argument("--size", type=parse_size, default=parse_size("64MiB"),
                    help="approximate total weight bytes, e.g. 64MiB, 1GiB (default 64MiB)")
    ap.add_argument("--shards", type=int, default=2, help="number of safetensors shards")
    ap.add_argument("--seed", type=int, default=0, help="same seed, same bytes")
    ap.add_argument("--summary", action="store_true",
                    help="print a JSON summary (files, sizes, sha256, roles)")
    ap.add_argument("--upload", metavar="S3_URL", help="upload the folder with s5cmd")
    ap.add_argument("--modelrevision", metavar="NAME",
                    help="print a ModelRevision manifest for the files instead of the summary")
    ap.add_argument("--bucket", default="modelplane", help="bucket named in --modelrevision")
    ap.add_argument("--prefix", default="", help="object prefix named in --modelrevision")
    ap.add_argument("--endpoint", default=os.environ.get("S3_ENDPOINT_URL", ""),
                    help="S3 endpoint named in --modelrevision (default $S3_ENDPOINT_URL)")
    args = ap.parse_args()

    if args.verify:
        problems = verify(args.out)
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0

    started = time.monotonic()
    summary = generate(args.out, args.size, args.shards, args.seed)
    summary["seconds"] = round(time.monotonic() - started, 2)
    if args.upload:
        upload(args.out, args.upload)
        summary["uploaded_to"] = args.upload
    if args.modelrevision:
        sys.stdout.write(model_revision(summary, args.modelrevision, args.bucket, args.prefix,
                                        args.endpoint))
    elif args.summary:
        json.dump(summary, sys.stdout, indent=2)
        sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
