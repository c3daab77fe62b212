// hip-unroll-test: loop=4 factor=4 mode=manual expect=unknown-induction-type
// A floating-point induction variable.
__global__ void k(float* a, int n) {
    for (float x = 0.0f; x < 1.0f; x += 0.25f) {
        a[0] += x;
    }
}
