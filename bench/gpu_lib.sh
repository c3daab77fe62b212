# Sourced by the GPU scripts of bench/ (gpu_smoke.sh, gpu_large_spec.sh, gpu_tune_ab.sh,
# gpu_batch_ab.sh).

# gpu_nvcc: the nvcc to use, printed: $NVCC, else $CUDA_HOME/bin/nvcc, else nvcc on PATH;
# nothing when none of them is an executable.
gpu_nvcc() {
  local nvcc=${NVCC:-}
  if [ -z "$nvcc" ] && [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ]; then
    nvcc=$CUDA_HOME/bin/nvcc
  fi
  if [ -z "$nvcc" ]; then
    nvcc=$(command -v nvcc || true)
  fi
  if [ -n "$nvcc" ] && [ -x "$nvcc" ]; then
    echo "$nvcc"
  fi
}

# gpu_nvidia [SUFFIX]: the machine has an NVIDIA GPU (a device node under $GPU_SMOKE_DEV, else
# /dev) and an nvcc (gpu_nvcc), printed; else the calling script's `fail` (SUFFIX appended to
# the no-GPU message; call it as `nvcc=$(gpu_nvidia) || exit 2`).
gpu_nvidia() {
  local dev=${GPU_SMOKE_DEV:-/dev} nvcc
  [ -e "$dev/nvidiactl" ] || [ -e "$dev/nvidia0" ] || fail "no NVIDIA GPU on this machine (no /dev/nvidia0)${1:-}"
  nvcc=$(gpu_nvcc)
  [ -n "$nvcc" ] || fail "no nvcc on this machine (NVCC, \$CUDA_HOME/bin, PATH)"
  echo "$nvcc"
}

# gpu_binary NO_CARGO_MESSAGE: the hip-unroll to run, printed as an absolute path: $HIP_UNROLL,
# else built here with `cargo build --release`; else the calling script's `fail` with the
# message (call it as `bin=$(gpu_binary "...") || exit 2`).
gpu_binary() {
  local bin=${HIP_UNROLL:-}
  if [ -z "$bin" ]; then
    command -v cargo >/dev/null || fail "$1"
    cargo build --release -q >&2 || fail "cargo build --release failed"
    bin=target/release/hip-unroll
  fi
  realpath "$bin"
}

# gpu_machine NVCC FILE: the date, host, cores, load, GPU and nvcc in FILE, and on stdout.
gpu_machine() {
  {
    echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
    "$1" --version | tail -1
  } | tee "$2"
}
