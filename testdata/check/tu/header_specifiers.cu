// A file that names no GPU qualifier itself: its functions are device code through
// `LIB_DEVICE` (a device qualifier), a macro of the header it includes (rocPRIM's headers and its
// `ROCPRIM_DEVICE`, defined in `config.hpp`). Checked alone, as a pre-commit hook checks the
// files a commit changes, it was skipped as host code: no loop was reported.
#include "headers/lib_config.cuh"

LIB_DEVICE void fill(float* a, int n)
{
    for (int i = 0; i < n; ++i) {  // ~ blockers: none
        a[i] = 0.f;
    }
    for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
        a[i] += 1.f;
        __syncthreads();
    }
}

// A host function beside it stays host code: no loop of it is reported.
void host_fill(float* a, int n)
{
    for (int i = 0; i < n; ++i) {
        a[i] = 0.f;
    }
}
