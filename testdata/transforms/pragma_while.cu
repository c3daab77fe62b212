// hip-unroll-test: loop=5 factor=2
// Pragma mode works on any loop kind.
__global__ void k(float* a, int n) {
    int i = 0;
    while (i < n) {
        a[i++] = 1.0f;
    }
}
