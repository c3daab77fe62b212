// Wave64-only code: reads the upper half of a 64-lane ballot.
#include <hip/hip_runtime.h>

__global__ void upper(unsigned* out, const int* in) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long votes = __ballot(in[i] > 0);
    out[i] = (unsigned)(votes >> 32);
}
