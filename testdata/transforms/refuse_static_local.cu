// hip-unroll-test: loop=4 factor=4 mode=manual expect=static-local-in-body
// A static local would be duplicated.
__device__ void k(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        static int calls = 0;
        a[i] = (float)calls;
    }
}
