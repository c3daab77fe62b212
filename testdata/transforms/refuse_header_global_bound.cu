// hip-unroll-test: loop=5 factor=4 mode=manual expect=bound-reads-global
// The bound reads `tu_limit`, a writable `__device__` global of a header.
#include "headers/tu_macros.h"
__global__ void k(float* a) {
    for (int i = 0; i < tu_limit; i++) { a[i] += 1.0f; }
}
