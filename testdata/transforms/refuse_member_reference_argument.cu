// hip-unroll-test: loop=10 factor=4 mode=manual expect=writes-bound
// A member function defined out of its struct (`Clip::apply`) takes the bound by reference.
struct Clip {
    int lim;
    __device__ void apply(int& x) const;
};
__device__ void Clip::apply(int& x) const { if (x > lim) x = lim; }
__global__ void k(int n, float* a, Clip c) {
    int m = n;
    for (int i = 0; i < m; ++i) {
        c.apply(m);
        a[i] = 1.0f;
    }
}
