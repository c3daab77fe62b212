// hip-unroll-test: loop=4 factor=2 mode=manual
// Tab indentation is kept.
__global__ void tabs(float* a, int n) {
	{
		int i = 0;
		for (; i <= 2147483646 && (i + 1) < n; i += 2) {
			{
				a[i] = 1.0f;
			}
			{
				a[(i + 1)] = 1.0f;
			}
		}
		for (; i < n; ++i) {
			a[i] = 1.0f;
		}
	}
}
