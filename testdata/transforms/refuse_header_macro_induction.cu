// hip-unroll-test: loop=5 factor=4 mode=manual expect=macro-in-body
// Issue 17: `AT(k)` comes from a header and reads the induction variable `i` by name.
#include "headers/tu_macros.h"
__global__ void shift(float* a, int n) {
    for (int i = 0; i < n - 1; i++) { AT(0) = AT(1); }
}
