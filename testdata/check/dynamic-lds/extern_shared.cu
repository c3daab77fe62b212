// Dynamic shared memory (extern __shared__, file scope and local) blocks; static __shared__ does not.
extern __shared__ float file_smem[];

__global__ void dyn(float* out, int n) {
  extern __shared__ int local_smem[];
  __shared__ float fixed[64];
  for (int i = 0; i < n; ++i) file_smem[i] = 0.f;  // ~ blockers: dynamic-lds
  for (int i = 0; i < n; ++i) {  // ~ blockers: dynamic-lds
    out[i] = local_smem[i];
  }
  for (int i = 0; i < 64; ++i) fixed[i] = out[i];  // ~ blockers: none
}

// A kernel whose own static array shadows the file-scope dynamic one.
__global__ void shadows(float* out) {
  __shared__ float file_smem[64];
  for (int i = 0; i < 64; ++i) file_smem[i] = out[i];  // ~ blockers: none
}

__device__ void param_shadow(float* file_smem, int n) {
  for (int i = 0; i < n; ++i) file_smem[i] = 0.f;  // ~ blockers: none
}
