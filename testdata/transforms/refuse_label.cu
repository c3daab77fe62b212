// hip-unroll-test: loop=4 factor=4 mode=manual expect=label-in-body
// A label in the body would be defined once per copy (a `goto` would be refused too).
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; ++i) {
    again:
        a[i] += 1.0f;
    }
}
