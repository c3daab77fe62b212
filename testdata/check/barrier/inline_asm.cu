// Inline assembly that contains a barrier instruction: AMD `s_barrier` (composable_kernel's
// `block_sync_lds`), PTX `bar.sync` / `barrier.sync` / `mbarrier.*`; directly, through a
// `__device__` helper, a macro and a lambda. Other assembly does not block.
#define BLOCK_SYNC_ASM() asm volatile("s_waitcnt lgkmcnt(0) \n s_barrier" ::: "memory")
#define NAMED_BAR(id, n) asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(n))

__device__ void block_sync_lds() {
  asm volatile("\
    s_waitcnt lgkmcnt(0) \n \
    s_barrier \
    " ::);
}

__device__ void wait_lds_only() { asm volatile("s_waitcnt lgkmcnt(0)" ::: "memory"); }

__global__ void gemm(float* a, int n) {
  for (int k = 0; k < n; ++k) {  // ~ blockers: barrier
    a[k] += 1.f;
    asm volatile("s_barrier" ::: "memory");
  }
  for (int k = 0; k < n; ++k) {  // ~ blockers: barrier
    a[k] += 1.f;
    block_sync_lds();
  }
  for (int k = 0; k < n; ++k) {  // ~ blockers: barrier
    BLOCK_SYNC_ASM();
  }
  for (int k = 0; k < n; ++k) {  // ~ blockers: barrier
    NAMED_BAR(1, 64);
  }
  auto sync = [&]() { __asm__ __volatile__("barrier.sync.aligned 0;"); };
  for (int k = 0; k < n; ++k) sync();
  // ~^ blockers: barrier
  for (int k = 0; k < n; ++k) {  // ~ blockers: barrier
    asm volatile("mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;" :: "r"(k), "r"(n));
  }
  // Not barriers: waits on the wave's own counters, arithmetic, async-copy group waits.
  for (int k = 0; k < n; ++k) {  // ~ blockers: none
    wait_lds_only();
    asm volatile("v_add_f32 %0, %1, %2" : "=v"(a[k]) : "v"(a[k]), "v"(1.f));
    asm volatile("cp.async.wait_group 0;" ::: "memory");
  }
}
