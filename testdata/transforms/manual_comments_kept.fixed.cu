// hip-unroll-test: loop=4 factor=2 mode=manual
// Comments inside the loop are copied; comments around it stay byte-identical.
__global__ void cm(float* a, int n) { /* before */
    {
        int i = 0;
        for (; i <= 2147483646 && (i + 1) < n; i += 2) {
            { // header comment
                /* i is not replaced in comments */
                a[i] = 1.0f; // "i" in a string-like comment
            }
            { // header comment
                /* i is not replaced in comments */
                a[(i + 1)] = 1.0f; // "i" in a string-like comment
            }
        }
        for (; i < n; ++i) { // header comment
            /* i is not replaced in comments */
            a[i] = 1.0f; // "i" in a string-like comment
        }
    }
    /* after */
}
