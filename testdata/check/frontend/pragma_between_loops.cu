// `#pragma unroll` between nested loops without braces: the grammar splits the nest, the
// frontend re-attaches it, so the inner loop's barrier still blocks the outer loops.
__global__ void nest(float* a, int* c) {
  #pragma unroll
  // ~^ diag: unroll-blocked
  for (int i = 0; i < 4; i++)  // ~ blockers: atomic
    #pragma unroll 2
    // ~^ diag: unroll-blocked
    for (int j = 0; j < 4; j++)  // ~ blockers: atomic
      atomicAdd(&c[j], i);
  #pragma unroll
  for (int i = 0; i < 4; i++)  // ~ blockers: none
    #pragma unroll
    for (int j = 0; j < 4; j++) a[i * 4 + j] = 0.f;  // ~ blockers: none
}
