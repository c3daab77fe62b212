// hip-unroll-test: loop=5 factor=4 mode=manual expect=unseen-macro
// The bound names `ROWS`, defined nowhere visible: it could read memory or the induction
// variable (a missing header's `#define ROWS (n - i)`).
__global__ void k(float* a) {
    for (int i = 0; i < ROWS; i++) { a[i] += 1.0f; }
}
