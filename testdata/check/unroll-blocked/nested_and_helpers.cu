// The diagnostic sits on the pragma; a blocker inside an inner loop reaches the outer pragma.
__device__ void publish(int* c) { atomicAdd(c, 1); }

__global__ void nested(float* s, int* c, int n) {
  #pragma unroll 2
  // ~^ diag: unroll-blocked
  for (int i = 0; i < 4; ++i) {  // ~ blockers: atomic
    #pragma unroll
    for (int j = 0; j < 4; ++j) s[j] += 1.f;  // ~ blockers: none
    for (int j = 0; j < n; ++j) publish(&c[j]);  // ~ blockers: atomic
  }
}
