// hip-unroll-test: loop=4 factor=2 mode=manual
// Tab indentation is kept.
__global__ void tabs(float* a, int n) {
	for (int i = 0; i < n; ++i) {
		a[i] = 1.0f;
	}
}
