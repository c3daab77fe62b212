// hip-unroll-test: loop=4 factor=8 mode=manual expect=factor-too-large
// Eight steps of 100 do not fit a signed char.
__global__ void k(float* a, signed char n) {
    for (signed char c = 0; c < n; c += 100) {
        a[c] = 1.0f;
    }
}
