// hip-unroll-test: loop=5 factor=4 mode=manual
// A template parameter bound is a constant of the kernel.
template <int BLOCK>
__global__ void tmpl(float* a) {
    for (int i = 0; i < BLOCK; ++i) {
        a[i] *= 2.0f;
    }
}
template __global__ void tmpl<64>(float*);
