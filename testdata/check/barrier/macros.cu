// Barriers reached through macros of the same file: object-like, function-like, and macros that
// expand to other macros.
#define BARRIER __syncthreads();
#define SYNC() __syncthreads()
#define PHASE(buf) do { (buf)[threadIdx.x] += 1.f; SYNC(); } while (0)
#define DOUBLE_PHASE(buf) PHASE(buf); PHASE(buf)
#define GRID_SYNC(g) (g).sync()
#define NOT_A_BARRIER(x) ((x) * 2)

__device__ void helper_with_macro(float* b) { PHASE(b); }

__global__ void macro_barriers(float* buf, int n) {
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    buf[i] = 0.f;
    BARRIER
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    SYNC();
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    DOUBLE_PHASE(buf);
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    helper_with_macro(buf);
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    buf[i] = NOT_A_BARRIER(buf[i]);
  }
}
