// hip-unroll-test: loop=5 factor=4
// Tab-indented inner loop.
__global__ void k(float* a, int n) {
	for (int r = 0; r < n; ++r) {
		#pragma unroll 4
		for (int i = 0; i < n; ++i) {
			a[r * n + i] = 1.0f;
		}
	}
}
