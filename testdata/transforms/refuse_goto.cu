// hip-unroll-test: loop=4 factor=4 mode=manual expect=goto-in-body
// `goto` out of the loop.
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        if (a[i] < 0.0f) goto done;
    }
done:
    a[0] = 0.0f;
}
