// A second code object for the capture tests, loaded from a file: fills a buffer.
#include <hip/hip_runtime.h>

extern "C" __global__ void fill(unsigned char* p, unsigned long n, unsigned char v) {
  unsigned long i = blockIdx.x * (unsigned long)blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}
