// hip-unroll-test: loop=6 factor=4 mode=manual
// The induction variable outlives the loop: its final value must be the original's.
__global__ void tail(float* a, int n, int* last) {
    int i;
    float s = 0.0f;
    for (i = 0; i < n; i += 3) {
        s += a[i];
    }
    last[0] = i;
    a[0] = s;
}
