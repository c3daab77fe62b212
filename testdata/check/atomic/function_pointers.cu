// Calls through function pointers that no name answers: an element of a table (`table[k](p)`),
// a pointer behind `*` (`(*fp)(p)`), a choice between pointers (`(c ? f : g)(p)`). Each may
// reach every function of the unit whose address is taken anywhere, file-scope initialisers
// included; here `add_atomic` is named only in the tables below, never in a function body.
// A direct call of a function that does no atomic stays a candidate, and so does a call through
// a local table that holds only such functions.
#include <hip/hip_runtime.h>

typedef void (*Op)(float*);
__device__ void add_atomic(float* p) { atomicAdd(p, 1.f); }
__device__ void plain_op(float* p) { *p += 1.f; }
__device__ Op g_table[2] = {add_atomic, plain_op};
__constant__ Op c_fp = &add_atomic;
__device__ Op host_filled[2];  // cudaMemcpyToSymbol from the host

struct Ops {
  Op table[2];
};

__global__ void tables(float* a, Ops* ops, int n) {
  for (int i = 0; i < n; ++i) g_table[i & 1](a);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) (*c_fp)(a);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) (*(host_filled[i & 1]))(a);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) ops->table[i & 1](a);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) (i ? g_table[0] : g_table[1])(a);  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) plain_op(a + i);  // ~ blockers: none
  Op local[2] = {plain_op, plain_op};
  for (int i = 0; i < n; ++i) local[i & 1](a);  // ~ blockers: none
}
