// hip-unroll-test: loop=4 factor=4 mode=manual expect=writes-step
// The body changes the step.
__global__ void k(float* a, int n, int s) {
    for (int i = 0; i < n; i += s) {
        s = s + 1;
    }
}
