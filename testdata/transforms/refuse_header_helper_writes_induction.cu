// hip-unroll-test: loop=5 factor=4 mode=manual expect=writes-induction-variable
// `tu_bump` is declared in a header (no body) and takes an `int&`: it may write `i`.
#include "headers/tu_macros.h"
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; i++) { a[i] += 1.0f; tu_bump(i); }
}
