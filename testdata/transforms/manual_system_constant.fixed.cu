// hip-unroll-test: loop=5 factor=2 mode=manual
// `FLT_MAX` comes from a system header but is a constant known by name: not an unseen macro.
#include <cfloat>
__global__ void k(float* a, int n) {
    {
        int i = 0;
        for (; i <= 2147483646 && (i + 1) < n; i += 2) {
            { a[i] = fminf(a[i], FLT_MAX); }
            { a[(i + 1)] = fminf(a[(i + 1)], FLT_MAX); }
        }
        for (; i < n; i++) { a[i] = fminf(a[i], FLT_MAX); }
    }
}
