// hip-unroll-test: loop=4 factor=2 mode=manual
// CRLF line endings are kept, and used for the new lines.
__global__ void crlf(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        a[i] = 1.0f;
    }
}
