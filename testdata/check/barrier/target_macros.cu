// Macros whose arguments are statements, each group in its own parentheses: CCCL's
// `NV_IF_TARGET(NV_IS_DEVICE, (...))`, `NV_IF_ELSE_TARGET(C, (...), (...))` and
// `NV_DISPATCH_TARGET(Q1, (...), Q2, (...))` (libcu++'s <nv/target>, not included here: the
// names are defined nowhere). The grammar cannot read `(a; b;)`, and without braces around the
// call it ended the loop at the group's first `;`, leaving the barrier after it (the loop was a
// candidate). The guards read every group's statements, what some target runs: a barrier or
// an atomic in any group blocks the loops around the call, with braces or without; a loop in a
// group is the function's loop; a statement-argument call before a loop is no pragma macro.
// hip-unroll-test: parse-errors 0

__global__ void target_barriers(float* p, int* c, int n) {
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    NV_IF_TARGET(NV_IS_DEVICE, (p[i] += 1.0f; __syncthreads();))
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: atomic
    NV_IF_ELSE_TARGET(NV_PROVIDES_SM_70, (p[i] *= 2.0f;), (atomicAdd(c, 1);));
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    NV_IF_ELSE_TARGET(NV_PROVIDES_SM_70, (p[i] *= 2.0f;), ({ p[i] += 1.0f; }));
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    NV_DISPATCH_TARGET(NV_IS_HOST, (p[i] = 0.0f;), NV_IS_DEVICE, (p[i] = 1.0f; __syncthreads();))
  }
}

// Without braces: the loop runs to the end of the call.
__device__ void target_braceless(float* p, int n) {
  for (int i = 0; i < n; ++i)  // ~ blockers: barrier
    NV_IF_TARGET(NV_IS_DEVICE, (p[i] += 1.0f; __syncthreads();))
  for (int j = 0; j < n; ++j)  // ~ blockers: barrier
    for (int i = 0; i < n; ++i)  // ~ blockers: barrier
      NV_IF_TARGET(NV_IS_DEVICE, (p[i] += j; __syncthreads();));
  for (int i = 0; i < n; ++i)  // ~ blockers: barrier
    if (p[i] > 0.0f) NV_IF_TARGET(NV_IS_DEVICE, (p[i] = 0.0f; __syncthreads();))
  for (int i = 0; i < 8; ++i)  // ~ blockers: none
    NV_IF_TARGET(NV_IS_DEVICE, (p[i] *= 2.0f;))
  __syncthreads();
}

// Loops in a group are the function's loops, guarded as any other.
__global__ void target_loops(float* p, int n) {
  NV_IF_TARGET(NV_IS_DEVICE, (
    for (int i = 0; i < 8; ++i) { p[i] *= 2.0f; }  // ~ blockers: none
    for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
      p[i] += 1.0f;
      __syncthreads();
    }
  ))
  NV_IF_TARGET(NV_IS_DEVICE, (p[0] = 0.0f;))
  for (int i = 0; i < n; ++i) p[i] += 2.0f;  // ~ blockers: none
  // ~^ pragma: none
}
