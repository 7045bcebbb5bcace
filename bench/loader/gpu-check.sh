#!/usr/bin/env bash
# GPU check for the streaming loader: builds the loader, then on cuda:0 runs the pinned-ring
# pipeline and GDS (where cuFile and the filesystem allow; per-file fallback otherwise),
# verifies every byte on the device against safetensors on the CPU (full and rank-aware
# loads), and times modelplane against safetensors, runai-model-streamer, fastsafetensors
# (bounce buffer and GDS) and instanttensor on the same GPU. Budget: under 10 minutes.
#
#   bench/loader/gpu-check.sh [SIZE_GIB=2] [REPS=2]
#
# Needs: an NVIDIA driver (nvidia-smi), cmake, ninja, g++ 12+, liburing-dev (scripts/setup.sh
# --no-tools installs them), and a Python with numpy, safetensors and a CUDA build of torch.
# It uses bench/loader/.venv when present (the benchmark venv: pip install numpy safetensors
# ml_dtypes torch runai-model-streamer fastsafetensors instanttensor), else python3. The
# GPU machine may have no internet: nothing is downloaded here; a missing anchor package is
# reported as SKIPPED and the rest runs. The CUDA runtime and cuFile are found by the loader
# with dlopen; where the system has none, the libraries of the nvidia-cuda-runtime and
# nvidia-cufile wheels in the venv are used (MODELPLANE_CUDART_LIBRARY/_CUFILE_LIBRARY).
# Exit: 0 all checks passed (or no GPU: SKIPPED), 1 a check failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
size=${1:-2}
reps=${2:-2}
deadline=$((SECONDS + 570))

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIPPED: no NVIDIA GPU or driver (nvidia-smi -L failed)"
  exit 0
fi
nvidia-smi -L

python=$root/bench/loader/.venv/bin/python
[[ -x $python ]] || python=$(command -v python3)
for module in numpy safetensors torch; do
  if ! "$python" -c "import $module" 2>/dev/null; then
    echo "SKIPPED: $python cannot import $module; install numpy safetensors torch (CUDA) first"
    exit 0
  fi
done

build=$root/build/gpu-check
echo "== build (Release) in $build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMODELPLANE_BUILD_TESTS=OFF \
  >/dev/null || exit 1
ninja -C "$build" -j"$(nproc)" modelplane_loader modelplane-stream >/dev/null || exit 1
export MODELPLANE_LOADER_LIBRARY=$build/node-agent/loader/libmodelplane_loader.so
export PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
site=$("$python" -c 'import site; print(site.getsitepackages()[0])')
if ! ldconfig -p | grep -q 'libcudart\.so'; then
  cudart=$(ls "$site"/nvidia/cuda_runtime/lib/libcudart.so.* "$site"/nvidia/cu*/lib/libcudart.so.* 2>/dev/null | head -1)
  [[ -n $cudart ]] && export MODELPLANE_CUDART_LIBRARY=$cudart
fi
if ! ldconfig -p | grep -q 'libcufile\.so'; then
  cufile=$(ls "$site"/nvidia/cufile/lib/libcufile.so.* "$site"/nvidia/cu*/lib/libcufile.so.* 2>/dev/null | head -1)
  [[ -n $cufile ]] && export MODELPLANE_CUFILE_LIBRARY=$cufile
fi

checkpoint=/tmp/modelplane-gpu-check-$size
if [[ ! -d $checkpoint ]]; then
  echo "== writing a ${size} GiB checkpoint to $checkpoint"
  "$python" "$root/bench/loader/make_checkpoint.py" --out "$checkpoint" --size "$size" \
    --shards 2 >/dev/null || exit 1
fi

echo "== stream CLI on cuda:0 (pinned ring, then GDS where available)"
"$build/node-agent/loader/modelplane-stream" stream "$checkpoint" --device cuda:0 --no-gds --json || exit 1
"$build/node-agent/loader/modelplane-stream" stream "$checkpoint" --device cuda:0 --json || exit 1

echo "== bytes on the device against safetensors"
timeout 240 "$python" "$root/bench/loader/gpu_load.py" verify "$checkpoint" || exit 1

echo "== timed loads onto cuda:0 ($reps repetitions, page cache dropped before each when root)"
for ((rep = 0; rep < reps; rep++)); do
  for tool in modelplane modelplane-nogds safetensors runai fastsafetensors fastsafetensors-gds instanttensor; do
    if ((SECONDS > deadline)); then
      echo "STOPPED: the 10-minute budget is spent"
      exit 0
    fi
    if [[ $(id -u) -eq 0 ]]; then sync; echo 3 >/proc/sys/vm/drop_caches; fi
    timeout 120 "$python" "$root/bench/loader/gpu_load.py" "$tool" "$checkpoint"
    status=$?
    if ((status == 3)); then continue; fi
    if ((status != 0)); then echo "FAILED: $tool exited $status"; fi
  done
done
echo "gpu-check: done"
