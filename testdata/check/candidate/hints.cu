// hip-unroll-test: hints
// With hints on, loops without a pragma that no guard blocks are reported as candidates.
__global__ void hints(float* a, const float* b, int n) {
  for (int i = 0; i < 8; ++i) a[i] += b[i];  // ~ blockers: none
  // ~^ diag: candidate
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    // ~^ diag: candidate
    a[i] *= 2.f;
  }
  #pragma unroll
  for (int i = 0; i < 4; ++i) a[i] = 0.f;  // ~ blockers: none
  for (int i = 0; i < n; ++i) __syncthreads();  // ~ blockers: barrier
}

// Host loops are never listed or hinted.
void host_side(float* a, int n) {
  for (int i = 0; i < n; ++i) a[i] = 0.f;
}
