// hip-unroll-test: loop=7 factor=4
// The loop is the unbraced body of another loop: it goes in a block with the pragma.
__global__ void k(float* a, const int* rows, int n) {
    // a comment before the outer loop
    int i, j;
    for (i = 0; i < n; i++)
        for (j = rows[i]; j < rows[i + 1]; j++)
            a[i] += a[j];
}
