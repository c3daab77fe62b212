// Look-alikes that must not block: names that contain "sync", "barrier" or "wait" without
// being a synchronisation call (variables, fields, helpers of this file that do not
// synchronise, a two-argument `wait`), and barrier words in comments and strings.
struct Stats { int barrier_count; int wait_cycles; };
__device__ int syncthreads_count_estimate(int n) { return n / 2; }
__device__ int wait(int a, int b) { return a + b; }

__global__ void k(int* x, int n, Stats* st) {
  int barrier = 0;
  int arrive = 0;
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    barrier += x[i];
    arrive = syncthreads_count_estimate(i) + wait(i, n);
    st->barrier_count = barrier;
    st->wait_cycles += arrive;
    // __syncthreads(); s_barrier
    const char* msg = "bar.sync 0; __syncwarp()";
    x[i] = msg[0];
  }
}
