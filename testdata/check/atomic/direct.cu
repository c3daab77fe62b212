// Atomic functions and builtins in the loop body.
__global__ void atomics(int* counters, float* sums, unsigned long long* wide, int n) {
  for (int i = 0; i < n; ++i) atomicAdd(&counters[i % 4], 1);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) atomicAdd_system(&sums[0], 1.f);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) atomicAdd_block(&sums[1], 1.f);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) unsafeAtomicAdd(&sums[2], 1.f);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) {  // ~ blockers: atomic
    __hip_atomic_fetch_add(&counters[0], 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  }
  for (int i = 0; i < n; ++i) __atomic_fetch_add(&counters[1], 1, __ATOMIC_SEQ_CST);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) atomicCAS(&counters[2], i, i + 1);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) atomicExch(wide, 0ull);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) atomicMax(&counters[3], i);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) counter_ref.fetch_add(1);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) __nv_atomic_fetch_add(&counters[4], 1, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) __nvvm_atom_add_gen_i(&counters[5], 1);  // ~ blockers: atomic
  // Clean: a variable named like an atomic, a method named like one, and a plain function.
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
  // ~^ unresolved: layout.atomic_local_m, nonatomic_add
    int atomic_count = counters[i] + layout.atomic_local_m();
    sums[i] = nonatomic_add(sums[i], atomic_count);
  }
}
