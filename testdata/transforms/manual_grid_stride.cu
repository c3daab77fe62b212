// hip-unroll-test: loop=5 factor=4 mode=manual
// Grid-stride loop: non-constant step, copies separated by the original update.
__global__ void saxpy(int n, float a, const float* x, float* y) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = tid; i < n; i += blockDim.x * gridDim.x) {
        y[i] = a * x[i] + y[i];
    }
}
