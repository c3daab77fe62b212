// hip-unroll-test: loop=4 factor=4
// CRLF file: the new line ends in CRLF too.
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        a[i] = 1.0f;
    }
}
