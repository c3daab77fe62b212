// hip-unroll-test: include-dir headers
// Issue 17's reproductions: every macro and helper comes from an included header (found through
// the include directory, then transitively through sub/deep.cuh, which includes its includer).
#include "helpers2.cuh"

__global__ void scale_skip(float* a, int n) {
  // `continue` in a macro: not a blocker (pragma unrolling is fine); the manual rewrite is
  // refused by the transform (pipeline/tests/tu.rs).
  for (int i = 0; i < n; i++) { SKIP_IF(a[i] > 3); a[i] = a[i] * 2; }  // ~ blockers: none
}

__global__ void scale_bail(float* a, int n) {
  for (int i = 0; i < n; i++) { if (a[i] > 3) BAIL_OUT; a[i] = a[i] * 2; }  // ~ blockers: early-exit
}

__global__ void leave(float* a, int n) {
  for (int i = 0; i < n; i++) { LEAVE_IF(a[i] < 0); a[i] = 1; }  // ~ blockers: early-exit
}

__global__ void shift(float* a, int n) {
  // Reads the induction variable inside the macro: refused by the transform, not the guard.
  for (int i = 0; i + 1 < n; i++) { AT(0) = AT(1); }  // ~ blockers: none
}

__global__ void reduce(float* a, float* scratch, int n) {
  for (int i = 0; i < n; i++) a[i] = block_reduce(a[i], scratch);  // ~ blockers: barrier
  for (int i = 0; i < n; i++) a[i] = reduce_via_deep(a[i], scratch);  // ~ blockers: barrier
  for (int i = 0; i < n; i++) a[i] = deep_reduce(a[i], scratch);  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] = twice(a[i]); BLOCK_SYNC(); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] = twice(a[i]); SYNC_TWICE(); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) a[i] = deep_plain(twice(a[i]));  // ~ blockers: none
}

__global__ void count(float* a, int* c, int n) {
  for (int i = 0; i < n; i++) add_to(&a[0], a[i]);  // ~ blockers: atomic
  for (int i = 0; i < n; i++) BUMP(&a[i]);  // ~ blockers: atomic
  for (int i = 0; i < n; i++) deep_count(c);  // ~ blockers: atomic
  for (int i = 0; i < n; i++) a[i] = twice(a[i]);  // ~ blockers: none
}
