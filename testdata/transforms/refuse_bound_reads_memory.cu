// hip-unroll-test: loop=4 factor=4 mode=manual expect=bound-reads-memory
// The bound reads memory the body writes.
__global__ void k(float* a, int* len) {
    for (int i = 0; i < len[0]; ++i) {
        len[i] = 0;
    }
}
