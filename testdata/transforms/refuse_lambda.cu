// hip-unroll-test: loop=4 factor=4 mode=manual expect=lambda-in-body
// A lambda that captures the induction variable.
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        auto f = [i](float x) { return x * i; };
        a[i] = f(2.0f);
    }
}
