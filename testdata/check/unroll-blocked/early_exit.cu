// A compiler pragma over a loop with an early exit is correct: only hip-unroll's manual rewrite
// refuses the exit, so `unroll-blocked` stays silent unless another blocker is there too.
__global__ void exits(const float* a, float* out, int* hits, int n) {
  // A constant-trip search with `break`: the compiler unrolls it with the test in every copy.
  #pragma unroll
  for (int i = 0; i < 8; ++i) {  // ~ blockers: early-exit
    if (a[i] < 0.f) break;
    out[i] = a[i];
  }
  #pragma unroll 4
  for (int i = 0; i < n; ++i) {  // ~ blockers: early-exit
    if (a[i] == 0.f) return;
    out[i] = 1.f / a[i];
  }
  #pragma unroll 2
  for (int i = 0; i < 16; ++i) {  // ~ blockers: early-exit
    for (int j = 0; j < 4; ++j) {  // ~ blockers: early-exit
      if (a[j] > 1.f) goto done;
    }
  }
done:
  // With a barrier too, the pragma is reported for the barrier only.
  #pragma unroll
  // ~^ diag: unroll-blocked
  for (int i = 0; i < 8; ++i) {  // ~ blockers: barrier, early-exit
    if (a[i] < 0.f) break;
    __syncthreads();
  }
  // An atomic with an exit: reported for the atomic.
  #pragma unroll 4
  // ~^ diag: unroll-blocked
  for (int i = 0; i < n; ++i) {  // ~ blockers: atomic, early-exit
    if (a[i] < 0.f) continue;
    if (a[i] > 9.f) break;
    atomicAdd(&hits[0], 1);
  }
}
