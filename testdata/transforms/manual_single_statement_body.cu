// hip-unroll-test: loop=5 factor=3 mode=manual
// A body without braces.
__global__ void one(float* a, int n) {
    float s = 0.0f;
    for (int i = 0; i < n; ++i) s += a[i];
    a[0] = s;
}
