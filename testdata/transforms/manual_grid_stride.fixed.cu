// hip-unroll-test: loop=5 factor=4 mode=manual
// Grid-stride loop: non-constant step, copies separated by the original update.
__global__ void saxpy(int n, float a, const float* x, float* y) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    {
        int i = tid;
        const unsigned long long hu_unroll_5_step = (unsigned long long)(blockDim.x * gridDim.x);
        for (; hu_unroll_5_step <= 4294967295ull && (long long)(i) + (long long)(3ull * hu_unroll_5_step) <= 2147483647ll && ((int)((long long)(i) + (long long)(3ull * hu_unroll_5_step))) < n; i += blockDim.x * gridDim.x) {
            {
                y[i] = a * x[i] + y[i];
            }
            i += blockDim.x * gridDim.x;
            {
                y[i] = a * x[i] + y[i];
            }
            i += blockDim.x * gridDim.x;
            {
                y[i] = a * x[i] + y[i];
            }
            i += blockDim.x * gridDim.x;
            {
                y[i] = a * x[i] + y[i];
            }
        }
        for (; i < n; i += blockDim.x * gridDim.x) {
            y[i] = a * x[i] + y[i];
        }
    }
}
