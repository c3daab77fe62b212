// Dynamic LDS reached through a helper that touches file-scope dynamic shared memory, and
// through macros naming it.
extern __shared__ float lds[];
#define AT(i) lds[(i)]
#define AT2(i) AT(i)

__device__ void fill(int i) { lds[i] = 1.f; }
__device__ float compute(float x) { return x * 2.f; }

__global__ void through(float* out, int n) {
  for (int i = 0; i < n; ++i) fill(i);  // ~ blockers: dynamic-lds
  for (int i = 0; i < n; ++i) out[i] = AT2(i);  // ~ blockers: dynamic-lds
  for (int i = 0; i < n; ++i) out[i] = compute(out[i]);  // ~ blockers: none
}
