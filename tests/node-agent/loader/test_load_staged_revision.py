"""The whole node path in one test: a checkpoint written by `safetensors`, staged into a cache
root by `modelplane-node-agent fetch` (every byte verified), then loaded by revision digest
through the Python package, byte for byte equal to what safetensors reads.

Run by ctest (node_agent_loader_python) with MODELPLANE_NODE_AGENT and
MODELPLANE_LOADER_LIBRARY set.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess

import numpy as np
import pytest
import safetensors
import safetensors.numpy

import modelplane_loader

AGENT = os.environ.get("MODELPLANE_NODE_AGENT", "")


def sha256(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()


@pytest.mark.skipif(not os.access(AGENT, os.X_OK), reason="MODELPLANE_NODE_AGENT not set")
def test_load_by_digest_after_staging(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    rng = np.random.default_rng(7)
    first = {f"layers.{i}.weight": rng.standard_normal((64, 96)).astype(np.float32) for i in range(3)}
    second = {"lm_head.weight": rng.standard_normal((128, 64)).astype(np.float16)}
    safetensors.numpy.save_file(first, model / "model-00001-of-00002.safetensors")
    safetensors.numpy.save_file(second, model / "model-00002-of-00002.safetensors")
    files = sorted(p for p in model.rglob("*.safetensors"))
    listing = "".join(
        f"    - path: {p.relative_to(model)}\n      size: {p.stat().st_size}\n"
        f"      sha256: {sha256(p)}\n      role: weights\n" for p in files)
    manifest = tmp_path / "revision.yaml"
    manifest.write_text(f"""apiVersion: modelplane.io/v1alpha1
kind: ModelRevision
metadata: {{name: staged, namespace: default}}
spec:
  modelName: staged
  format: safetensors
  engine: {{name: vllm, version: 0.6.3}}
  files:
{listing}  sources:
    - name: nfs
      type: sharedFilesystem
      sharedFilesystem:
        path: {model}
""")
    cache = tmp_path / "cache"
    staged = subprocess.run([AGENT, "fetch", "--revision", str(manifest), "--cache-root", str(cache)],
                            capture_output=True, text=True, check=True)
    report = json.loads(staged.stdout)
    assert report["ready"] and report["tier"] == "sharedFilesystem"

    tensors = modelplane_loader.load(report["revisionDigest"], cache_root=cache)
    expected = {**first, **second}
    assert set(tensors.keys()) == set(expected)
    for name, array in expected.items():
        np.testing.assert_array_equal(np.asarray(tensors[name]), array)

    with pytest.raises(FileNotFoundError):
        modelplane_loader.load("sha256:" + "0" * 64, cache_root=cache)
    with pytest.raises(ValueError):
        modelplane_loader.load("sha256:nothex", cache_root=cache)
