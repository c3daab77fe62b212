// hip-unroll-test: loop=4 factor=4 mode=manual expect=break-leaves-loop
// `break` leaves the loop.
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        if (a[i] < 0.0f) break;
        a[i] = 1.0f;
    }
}
