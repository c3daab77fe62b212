// hip-unroll-test: loop=5 factor=4 mode=manual expect=writes-induction-variable
// A lambda stored in a local takes the induction variable by reference and increments it.
__global__ void k(int n, int s, float* a) {
    auto skip = [](int& x) { x += 1; };
    for (int i = 0; i < n; i += s) {
        if (a[i] < 0.0f) skip(i);
        a[i] = 1.0f;
    }
}
