// Atomics through helpers and macros; a lambda calling an atomic inside the loop counts too.
#define BUMP(p) atomicAdd((p), 1)
#define BUMP_TWICE(p) BUMP(p); BUMP(p)
#define SCALE(x) ((x) * 3)

__device__ void record(int* hist, int bin) { atomicInc((unsigned*)&hist[bin], 1u << 30); }
__device__ void record_via(int* hist, int bin) { record(hist, bin); }
__device__ int plain(int x) { return SCALE(x); }

__global__ void helpers(int* hist, const int* keys, int n) {
  for (int i = 0; i < n; ++i) record_via(hist, keys[i]);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) { BUMP_TWICE(&hist[0]); }  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) {  // ~ blockers: atomic
    auto add = [&](int b) { atomicAdd(&hist[b], 1); };
    add(keys[i]);
  }
  for (int i = 0; i < 4; ++i) hist[i] = plain(keys[i]);  // ~ blockers: none
}
