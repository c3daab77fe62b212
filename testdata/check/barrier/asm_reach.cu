// Barriers written in inline assembly reached in the newer ways: a method of the receiver's
// class, a constructor of a local object, a function with an unknown specifier macro, a
// macro that uses a helper. A method of the same name that does not synchronise does not block.
#define SYNC_VIA_HELPER() named_barrier(0)

__device__ void named_barrier(int id) { asm volatile("bar.sync %0;" :: "r"(id) : "memory"); }

struct AmdStage {
  __device__ void fence() { asm volatile("s_waitcnt lgkmcnt(0)\n s_barrier" ::: "memory"); }
};
struct NvStage {
  __device__ void fence() { asm volatile("barrier.sync 0;" ::: "memory"); }
};
struct NoStage {
  __device__ void fence() { asm volatile("s_waitcnt vmcnt(0)" ::: "memory"); }
};
struct Phase {
  __device__ Phase() { asm volatile("s_barrier" ::: "memory"); }
};

CK_DEVICE void block_sync() { asm volatile("s_waitcnt lgkmcnt(0)\n s_barrier" ::: "memory"); }

__global__ void asm_reach(float* a, int n) {
  AmdStage amd;
  NvStage nv;
  NoStage none;
  for (int i = 0; i < n; ++i) { a[i] += 1.f; amd.fence(); }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { a[i] += 1.f; nv.fence(); }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { a[i] += 1.f; none.fence(); }  // ~ blockers: none
  for (int i = 0; i < n; ++i) { Phase p; a[i] += 1.f; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { a[i] += 1.f; block_sync(); }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { a[i] += 1.f; SYNC_VIA_HELPER(); }  // ~ blockers: barrier
}
