// Stores that the kernels' text hides, as real repositories write them: index macros that name
// a parameter, math functions that return a result through a pointer, a loop macro, and index
// macros from a header that is only found with `-I include`.
#include <hip/hip_runtime.h>
#include "grid3.cuh"

#define xv(j, i) x[((j) + halo) * stride + (i) + halo]
#define KERNEL_LOOP(i, n) \
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)

// `x` is written only through `xv`; `src` is read.
__global__ void halo_init(double* x, const double* src, int halo, int stride, int rows) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y;
    if (j < rows && i < stride - 2 * halo) {
        xv(j, i) = src[j * stride + i];
    }
}

// `s` and `c` are written by sincosf through their addresses; `a` is read.
__global__ void polar(const float* a, float* s, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        sincosf(a[i], s + i, &c[i]);
    }
}

// A loop macro: the body is a statement of its own after the macro's `for (...)`.
__global__ void scatter_add(int n, const float* vals, const int* idx, float* out) {
    KERNEL_LOOP(k, n) {
        atomicAdd(out + idx[k], vals[k]);
    }
}

// `a_lu` is written through `lu`, `a_u` read through `u`, both from grid3.cuh.
__global__ void relax(const float* a_u, float* a_lu, float w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y;
    if (i < n && j < n) {
        lu(0, i, j) = w * u(0, i, j) + (1.0f - w) * lu(0, i, j);
    }
}
