// A kernel whose header uses macros defined in another file: an attribute macro between the
// return type and the name, and a qualifier macro in every parameter (HeCBench s3d qssa.h).
// tree-sitter reads `name(real* RESTRICT a)` as a call; the kernel must still be analysed.
template <class real>
__global__ void
LAUNCH_BOUNDS (QSSA_THRD, QSSA_BLK)
qssa_kernel(real* RESTRICT RF, real* RESTRICT RB) {
  for (int i = 0; i < 4; ++i) {
    // ~^ blockers: barrier
    RF[threadIdx.x + i] = RB[i];
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i) RB[i] = 0;
  // ~^ blockers: none
}

// A host function after it stays host code.
void host(float* RESTRICT a) {
  for (int i = 0; i < 4; ++i) a[i] = 0;
}
