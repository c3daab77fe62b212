// Every quoted include is found (next to the file, then transitively): no note.
#include "../tu/headers/functors.cuh"
#include <hip/hip_runtime.h>

__global__ void k(float* a, float* s, int n) {
  HeaderSync hs;
  for (int i = 0; i < n; i++) a[i] += 1;  // ~ blockers: none
  for (int i = 0; i < n; i++) { a[i] += 1; hs(s); }  // ~ blockers: barrier
}
