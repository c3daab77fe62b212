// hip-unroll-test: loop=5 factor=3 mode=manual
// A body without braces.
__global__ void one(float* a, int n) {
    float s = 0.0f;
    {
        int i = 0;
        for (; i <= 2147483645 && (i + 2) < n; i += 3) {
            { s += a[i]; }
            { s += a[(i + 1)]; }
            { s += a[(i + 2)]; }
        }
        for (; i < n; ++i) s += a[i];
    }
    a[0] = s;
}
