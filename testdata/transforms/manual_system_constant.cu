// hip-unroll-test: loop=5 factor=2 mode=manual
// `FLT_MAX` comes from a system header but is a constant known by name: not an unseen macro.
#include <cfloat>
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; i++) { a[i] = fminf(a[i], FLT_MAX); }
}
