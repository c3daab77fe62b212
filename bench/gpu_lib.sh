# Sourced by the GPU scripts of bench/ (gpu_smoke.sh, gpu_large_spec.sh, gpu_tune_ab.sh).

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
