// Parameter types `spec new` maps, marks or refuses (testdata/specgen): a typedef of the file,
// a type it cannot see the definition of, half precision.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <stdint.h>

typedef unsigned int index_type;

// `index_type` is the file's typedef (u32); `intmax_t` comes from a system header: a
// placeholder type to fill.
__global__ void typed(float* out, index_type n, intmax_t scale) {
    index_type i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = (float)scale;
    }
}

__global__ void halves(__half* out, const __half* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i];
    }
}

// A template kernel that the file launches but never instantiates explicitly.
template <typename T, int BS>
__global__ void fill_t(T* out, T v, int n) {
    int i = blockIdx.x * BS + threadIdx.x;
    if (i < n) out[i] = v;
}
void launch_fill(float* p, int n) { fill_t<float, 128><<<(n + 127) / 128, 128>>>(p, 1.0f, n); }
