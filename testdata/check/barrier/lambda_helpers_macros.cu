// A lambda bound to a local and called in a loop blocks it when its body reaches a barrier or
// an atomic directly, through a `__device__` function, or through a macro of this file.
#define SYNC() __syncthreads()
#define BUMP(p) atomicAdd(p, 1)
__device__ void wait_all() { __syncthreads(); }
__device__ void pure(float* x) { x[0] = 1.f; }

__global__ void k(float* x, int* c) {
  auto direct = [&]() { __syncthreads(); };
  auto helper = [&]() { wait_all(); };
  auto macro = [&]() { SYNC(); };
  auto count = [&]() { BUMP(c); };
  auto clean = [&]() { pure(x); };
  for (int i = 0; i < 8; ++i) direct();
  // ~^ blockers: barrier
  for (int i = 0; i < 8; ++i) helper();
  // ~^ blockers: barrier
  for (int i = 0; i < 8; ++i) macro();
  // ~^ blockers: barrier
  for (int i = 0; i < 8; ++i) count();
  // ~^ blockers: atomic
  for (int i = 0; i < 8; ++i) clean();
  // ~^ blockers: none
}
