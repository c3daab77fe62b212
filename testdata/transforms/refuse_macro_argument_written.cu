// hip-unroll-test: loop=5 factor=4 mode=manual expect=writes-induction-variable
// A function-like macro increments its argument, here the induction variable.
#define SKIP(x) (x)++
__global__ void k(int n, int s, float* a) {
    for (int i = 0; i < n; i += s) {
        if (a[i] < 0.0f) SKIP(i);
        a[i] = 1.0f;
    }
}
