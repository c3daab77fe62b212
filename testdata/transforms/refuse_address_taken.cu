// hip-unroll-test: loop=5 factor=4 mode=manual expect=induction-variable-address-taken
// The address of the induction variable escapes.
__device__ void touch(int* p);
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        touch(&i);
    }
}
