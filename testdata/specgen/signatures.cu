// Kernel signatures `spec new` must read right (testdata/specgen): restrict-qualified outputs,
// plain `float*` inputs that are never written, outputs written only through a helper in a
// header, templates, const inputs, grid-stride loops, a kernel in a namespace, atomics, a
// pointer derived from a parameter, a store through a macro, a const pointer written through
// a cast, a struct parameter.
#include <hip/hip_runtime.h>
#include "helpers.cuh"

#define PUT(P, I, V) (P)[I] = (V)

// A grid-stride loop; `x` is a plain float* that is only read.
__global__ void saxpy(float* __restrict__ out, float* x, const float* __restrict__ y, float a,
                      int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        out[i] = a * x[i] + y[i];
    }
}

// The output is written only by helpers.cuh's store_pair -> store_scaled.
__global__ void fill_through_helper(float* dst, const float* src, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    store_pair(dst + 2 * i, src[i], 0.0f);
}

template <typename T, int UNROLL>
__global__ void scale(T* data, T factor, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        data[i] *= factor;
    }
}
template __global__ void scale<double, 4>(double*, double, size_t);

namespace ops {
__global__ void __launch_bounds__(128) histogram(const unsigned char* in, unsigned int* bins,
                                                 int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&bins[in[i]], 1u);
    }
}
}  // namespace ops

// A pointer derived from a parameter, a store through a macro, a 64-bit count.
__global__ void derived(float* out, int* flags, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) {
        float* pair = out + 2 * i;
        pair[0] = 1.0f;
        pair[1] = 2.0f;
        PUT(flags, i, 1);
    }
}

// `buf` is declared const and written anyway, through a cast.
__global__ void sneaky(const float* buf, int n) {
    int i = threadIdx.x;
    if (i < n) {
        ((float*)buf)[i] = 0.0f;
    }
}

struct Params {
    float* out;
    int n;
};

__global__ void with_struct(Params p) {
    if ((int)threadIdx.x < p.n) {
        p.out[threadIdx.x] = 1.0f;
    }
}
