// hip-unroll-test: loop=4 factor=4 mode=manual expect=unknown-step-sign
// `i += s` with a `>` condition: only a negative s makes sense, and its sign is unknown.
__global__ void k(float* a, int n, int s) {
    for (int i = n; i > 0; i += s) {
        a[i] = 0.0f;
    }
}
