// A statement macro followed by a block (`CUDA_KERNEL_LOOP(i, n) { ... }`, `FOR_EACH(x) {`)
// reads to the grammar as a function defined inside the kernel. The block is the kernel's own
// code: a barrier in it blocks the loops around it, loops in it are the kernel's loops, and a
// macro whose replacement list syncs blocks the loop it is used in.
#define CUDA_KERNEL_LOOP(i, n) \
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)
#define SYNCED_STEP(k) if ((k) >= 0) __syncthreads(); if ((k) >= 0)

__global__ void grid_stride(float* p, int n) {
  for (int j = 0; j < 4; ++j) {  // ~ blockers: barrier
    CUDA_KERNEL_LOOP(i, n) {
      p[i] += 1.0f;
      __syncthreads();
    }
  }
  for (int j = 0; j < 4; ++j) {  // ~ blockers: none
    CUDA_KERNEL_LOOP(i, n) {
      for (int k = 0; k < 8; ++k) p[i] += k;  // ~ blockers: none
    }
  }
  CUDA_KERNEL_LOOP(i, n) {
    for (int k = 0; k < 8; ++k) {  // ~ blockers: barrier
      p[i] += k;
      __syncthreads();
    }
  }
}

__global__ void macro_syncs(float* p) {
  for (int j = 0; j < 4; ++j) {  // ~ blockers: barrier
    SYNCED_STEP(j) {
      p[j] = 0.f;
    }
  }
}

// Without braces around it, the grammar ends the loop at the macro (a missing `;`) and leaves
// the block after it: the loop's body still runs to the block's end.
__global__ void braceless(float* p, int n) {
  for (int j = 0; j < 4; ++j)  // ~ blockers: barrier
    CUDA_KERNEL_LOOP(i, n) { p[i] += j; __syncthreads(); }
  for (int j = 0; j < 4; ++j)  // ~ blockers: none
    CUDA_KERNEL_LOOP(i, n) {
      for (int k = 0; k < 8; ++k) p[i] += k;  // ~ blockers: none
    }
  __syncthreads();
}
