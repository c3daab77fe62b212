// hip-unroll-test: loop=4 factor=4 mode=manual expect=return-in-body
// `return` leaves the loop.
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        if (a[i] < 0.0f) return;
    }
}
