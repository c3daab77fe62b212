// hip-unroll-test: loop=6 factor=4 mode=manual expect=factor-too-large
// Three steps of 2^62 exceed the type-generic limit (2^63-1): the guard `i <= max - 3*step`
// would wrap for a 64-bit unsigned J.
template <class J>
__global__ void k(float* a, J n) {
    for (J i = 0; i < n; i += 4611686018427387904) {
        a[0] += 1.0f;
    }
}
