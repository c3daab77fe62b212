// Toolkit headers spelled with quotes are the compiler's, as with angle brackets: never
// reported (`frontend::tu::toolkit_of` lists them). A vendored header library that is not found
// (CUTLASS) is reported: its macros matter to the guards.
#include "cuda.h"
#include "cuda_runtime.h"
#include "cublas_v2.h"
#include "cooperative_groups.h"
#include "cub/cub.cuh"
#include "thrust/sort.h"
#include "hip/hip_runtime.h"
#include "math.h"
#include "cutlass/cutlass.h"
// ~^ diag: include-not-found

__global__ void k(float* a, int n) {
  for (int i = 0; i < n; i++) a[i] = 2.f * a[i];  // ~ blockers: none
}
