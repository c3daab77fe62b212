// hip-unroll-test: loop=6 factor=4 mode=manual
// The induction variable outlives the loop: its final value must be the original's.
__global__ void tail(float* a, int n, int* last) {
    int i;
    float s = 0.0f;
    {
        i = 0;
        for (; i <= 2147483638 && (i + 9) < n; i += 12) {
            {
                s += a[i];
            }
            {
                s += a[(i + 3)];
            }
            {
                s += a[(i + 6)];
            }
            {
                s += a[(i + 9)];
            }
        }
        for (; i < n; i += 3) {
            s += a[i];
        }
    }
    last[0] = i;
    a[0] = s;
}
