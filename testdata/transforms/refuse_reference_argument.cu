// hip-unroll-test: loop=6 factor=4 mode=manual expect=writes-induction-variable
// A device function of this file takes the induction variable by non-const reference.
__device__ void skip_negative(const float* a, int& i) { if (a[i] < 0.0f) ++i; }
__device__ float use(float x, const int& j) { return x * (float)j; }
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        a[0] += use(a[i], i);
        skip_negative(a, i);
    }
}
