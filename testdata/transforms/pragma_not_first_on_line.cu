// hip-unroll-test: loop=4 factor=2
// The loop shares its line with an `if`: the loop is wrapped in a block that starts with the pragma.
__global__ void k(float* a, int n, bool go) {
    if (go) for (int i = 0; i < n; ++i) a[i] = 1.0f;
}
