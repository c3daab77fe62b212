// Uses an AMDGPU builtin through a macro: no CUDA meaning, refused on the NVIDIA path.
#include <hip/hip_runtime.h>

#define FIRST_LANE(x) __builtin_amdgcn_readfirstlane(x)

__global__ void broadcast(int* out, const int* in) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = FIRST_LANE(in[i]);
}
