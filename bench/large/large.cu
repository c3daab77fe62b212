// A bandwidth-bound kernel over 2 x 1.6 GB (400 M floats in, 400 M out), for the real-GPU check
// of a bench session's host work (bench/gpu_large_spec.sh, issue 27): a grid-stride loop (a
// runtime trip count) around a short constant-trip polynomial loop.
#include <cuda_runtime.h>

__global__ void poly(const float* x, float* y, long n) {
    long stride = (long)blockDim.x * gridDim.x;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = x[i];
        float acc = 1.0f;
        for (int k = 0; k < 4; ++k) {
            acc = fmaf(acc, v, 0.5f);
        }
        y[i] = acc;
    }
}
