// hip-unroll-test: loop=4 factor=4 mode=manual expect=writes-bound
// `swap` (std:: or a header's) takes its arguments by reference.
__global__ void k(int n, int m, float* a) {
    for (int i = 0; i < n; ++i) {
        std::swap(n, m);
        a[i] = 1.0f;
    }
}
