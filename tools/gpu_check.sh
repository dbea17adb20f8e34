#!/usr/bin/env bash
# The CUDA backend on a real NVIDIA GPU, in one command (issue 20, item 6).
#
#   tools/gpu_check.sh [REPORT_DIR]      (default: $OUT if set, else the current folder)
#
# For a machine with an NVIDIA GPU and no network.  It uses that machine's own
# Python (PYTHON=..., default python3) with what minitorch needs already there:
# numba-cuda, NumPy, Numba, click, safetensors, pytest, pytest-xdist, hypothesis
# (and PyTorch for the benchmark), seen from a throwaway virtual environment
# (--system-site-packages).  The steps, each with its own time limit (under 10
# minutes in all):
#
#   setup      the throwaway environment, this checkout installed in it with --no-deps
#   device     nvidia-smi, and the GPU as minitorch sees it
#   tests      pytest -m cuda with the simulator OFF: every CUDA test compiled and run for real
#   train      minitorch train mnist, one epoch on cuda and one on cpu: their losses compared
#   benchmark  tools/cuda_bench.py: minitorch against PyTorch on the same GPU
#
# It writes one report, REPORT_DIR/gpu_check.txt, with each step's whole log beside
# it (gpu_check.STEP.log), and exits 0 when every step passed, 1 when one failed (or
# was skipped: no PyTorch), and 2, after one line saying why, when there is no GPU.
# shellcheck disable=SC2317  # the steps are functions run by name (export -f, bash -c)
set -uo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python3}
REPORT_DIR=${1:-${OUT:-.}}
export GPU_CHECK_WORKERS=${GPU_CHECK_WORKERS:-12} GPU_CHECK_TESTS_SECONDS=${GPU_CHECK_TESTS_SECONDS:-240}
mkdir -p "$REPORT_DIR" || { echo "gpu_check: cannot create $REPORT_DIR" >&2; exit 1; }
REPORT="$(cd "$REPORT_DIR" && pwd)/gpu_check.txt"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PY="$WORK/venv/bin/python"
# Real kernels, not the simulator's; compiled once into the throwaway folder and loaded
# from there by the later steps (not from a by-content cache the environment may name).
export NUMBA_ENABLE_CUDASIM=0 NUMBA_CACHE_DIR="$WORK/numba-cache" PYTHONDONTWRITEBYTECODE=1
unset MINITORCH_KERNEL_CACHE_BY_CONTENT
export REPO PYTHON WORK PY
cd "$REPO" || exit 1

# No GPU: one line that says which of a CUDA library, the driver or a device is missing
# (minitorch's own diagnosis, backends/cuda/runtime.py), and exit 2.
found=$(timeout 40 "$PYTHON" -c '
from minitorch.backends.cuda import runtime
reason = runtime.unavailable_reason()
print("GPU" if reason is None else "NONE " + reason.split(". Use device=")[0])' 2>&1 | tail -n 1)
case $found in
    GPU) ;;
    "NONE "*) echo "gpu_check: no NVIDIA GPU to check: ${found#NONE }" | tee "$REPORT"; exit 2 ;;
    *) echo "gpu_check: $PYTHON cannot import minitorch: $found" | tee "$REPORT"; exit 2 ;;
esac

# ---------------------------------------------------------------------------
# The steps (run by `step`, each in its own bash, under `timeout`)
# ---------------------------------------------------------------------------
setup() {
    "$PYTHON" -m venv --system-site-packages --without-pip "$WORK/venv" || return 1
    # A $PYTHON that is itself a virtual environment: its packages are not the system's.
    # Added as *site* directories (site.addsitedir), so that their own .pth files run:
    # numba-cuda's is what makes ``numba.cuda`` numba-cuda's target rather than Numba's
    # built-in one (a plain path line left the built-in target in place on an H200).
    "$PYTHON" -c 'import site
for path in site.getsitepackages():
    print(f"import site; site.addsitedir({path!r})")' \
        >"$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/outer.pth"
    PYTHONWARNINGS=ignore "$PY" -m pip install --quiet --no-deps --no-build-isolation \
        --no-index -e "$REPO"
}

device() {
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
    "$PY" -c 'import minitorch, numba, numba_cuda
from numba import cuda
print("numba", numba.__version__, "  numba-cuda", numba_cuda.__version__,
      "  numba.cuda:", cuda.implementation, "target")
print("minitorch sees", minitorch.cuda.device_count(), "GPU(s):", minitorch.cuda.get_device_name(0))'
}

tests() {
    # Twelve workers: the machines lent here have 16 cores, and each worker compiles the
    # kernels it meets first (the others load them from the shared cache).
    # -v names each test as it ends, and SIGINT before the step's limit makes pytest print
    # its summary of the failures so far: the log says which tests failed even when the
    # step runs out of time.
    timeout -s INT $((GPU_CHECK_TESTS_SECONDS - 15)) "$PY" -m pytest -v --tb=short -n "${GPU_CHECK_WORKERS:-8}" \
        -p no:cacheprovider -m cuda tests
}

train() {
    # Both epochs at once (the CPU's on the CPU cores); the same seed and data.
    "$WORK/venv/bin/minitorch" train mnist --epochs 1 --json --no-progress --device cuda \
        >"$WORK/cuda.json" & local on_gpu=$!
    "$WORK/venv/bin/minitorch" train mnist --epochs 1 --json --no-progress --device cpu \
        >"$WORK/cpu.json" & local on_cpu=$!
    wait "$on_gpu"; local gpu=$?
    wait "$on_cpu" && [ "$gpu" -eq 0 ] || return 1
    "$PY" - "$WORK/cuda.json" "$WORK/cpu.json" <<'EOF'
import json, sys
cuda, cpu = (json.load(open(path))["history"][-1] for path in sys.argv[1:])
for key in ("loss", "test_loss", "test_acc", "seconds", "compile_seconds"):
    print(f"{key:16} cuda {cuda[key]:10.5f}   cpu {cpu[key]:10.5f}")
# Sums round differently on the GPU (docs/cuda.md): close, not equal.
close = (all(abs(cuda[k] - cpu[k]) <= 0.01 * abs(cpu[k]) for k in ("loss", "test_loss"))
         and abs(cuda["test_acc"] - cpu["test_acc"]) <= 0.02)
print("the two epochs agree" if close else "FAILED: losses 1% apart, or accuracy 2 points")
sys.exit(0 if close else 1)
EOF
}

benchmark() {
    "$PY" -c 'import sys, torch; sys.exit(not torch.cuda.is_available())' 2>/dev/null ||
        { echo "no PyTorch with CUDA in $PYTHON: nothing to compare with"; return 3; }
    "$PY" tools/cuda_bench.py
}

export -f setup device tests train benchmark

failed=0
started=$SECONDS
{
    echo "# gpu_check $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null)"
    echo "# $PYTHON: Python $("$PYTHON" -c 'import sys; print(sys.version.split()[0])')"
} >"$REPORT"

# step NAME SECONDS: run the function NAME under a time limit; the end of its output goes
# in the report, its verdict on the terminal too.
step() {
    local name=$1 limit=$2 t0=$SECONDS rc verdict=ok
    timeout --kill-after=10 "$limit" bash -c "$name" >"$WORK/$name.log" 2>&1
    rc=$?
    if [ "$rc" -eq 124 ]; then
        verdict="FAILED (over its $limit s)"
    elif [ "$rc" -eq 3 ]; then
        verdict="SKIPPED ($(tail -n 1 "$WORK/$name.log"))"
    elif [ "$rc" -ne 0 ]; then
        verdict="FAILED (exit $rc)"
    fi
    [ "$verdict" = ok ] || failed=1
    printf '\n## %s: %s, %d s\n' "$name" "$verdict" $((SECONDS - t0)) >>"$REPORT"
    tail -n 60 "$WORK/$name.log" >>"$REPORT"
    cp "$WORK/$name.log" "${REPORT%.txt}.$name.log" 2>/dev/null
    echo "gpu_check: $name: $verdict, $((SECONDS - t0)) s"
}

step setup 30
[ "$failed" -eq 0 ] || { echo "gpu_check: report in $REPORT"; exit 1; }
step device 20
[ "$failed" -eq 0 ] || { echo "gpu_check: report in $REPORT"; exit 1; }
# GPU_CHECK_STEPS picks and orders the steps (to rerun one on a short lease), e.g.
# GPU_CHECK_STEPS="train benchmark tests" GPU_CHECK_TESTS_SECONDS=60.
for name in ${GPU_CHECK_STEPS:-tests train benchmark}; do
    case $name in
        tests) step tests "$GPU_CHECK_TESTS_SECONDS" ;;
        train) step train 140 ;;
        benchmark) step benchmark 120 ;;
        *) echo "gpu_check: no step $name (tests, train, benchmark)"; failed=1 ;;
    esac
done

printf '\n# %s, %d s\n' "$([ "$failed" -eq 0 ] && echo "every step passed" || echo "a step FAILED")" \
    $((SECONDS - started)) >>"$REPORT"
echo "gpu_check: report in $REPORT"
exit "$failed"
