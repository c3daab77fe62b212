// AdamW update in the style of llm.c's kernels (written for hip-unroll's tests): a float `lerp`
// built from `fma` on floats, which must stay fma.rn.f32 (never a double fma), powf-free bias
// corrections passed in, sqrtf.
#include <cuda_runtime.h>

__device__ float lerp(float start, float end, float weight) {
    return fma(weight, end, fma(-weight, start, start));
}

__global__ void adamw_kernel(float* params, const float* grads, float* m, float* v, long n,
                             float lr, float beta1, float beta2, float c1, float c2, float eps,
                             float wd) {
    long stride = (long)blockDim.x * gridDim.x;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += stride) {
        float g = grads[i];
        float mi = lerp(g, m[i], beta1);
        float vi = lerp(g * g, v[i], beta2);
        m[i] = mi;
        v[i] = vi;
        params[i] -= lr * (mi / c1 / (sqrtf(vi / c2) + eps) + wd * params[i]);
    }
}
