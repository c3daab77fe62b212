// hip-unroll-test: loop=5 factor=4 mode=manual expect=non-canonical-header
// `i = i + s < 3` is `i = ((i + s) < 3)`: the step is not `s < 3`.
__global__ void k(int n, int s, float* a) {
    int i = 0;
    for (; i < n; i = i + s < 3) {
        a[0] += 1.0f;
    }
}
