// Shared memory declared through macros: `#define SMEM __shared__` then `extern SMEM float
// s[];`, a macro that is `extern __shared__` itself, and a header's (rocPRIM's
// `ROCPRIM_SHARED_MEMORY T storage;`). The grammar could not read the declarations (a macro
// it cannot expand in front of the type): the dynamic arrays were not seen and the loops that
// write them were candidates. The macros are now skipped by the parse and the declaration is
// what they make it; a static array through a macro blocks nothing.
#include "../tu/headers/lib_config.cuh"

#define SMEM __shared__
#define DYN_SMEM extern __shared__

__global__ void k(float* a, int n)
{
    extern SMEM float s[];
    for (int i = 0; i < n; ++i) {  // ~ blockers: dynamic-lds
        s[i] = a[i];
    }
    DYN_SMEM float d[];
    for (int i = 0; i < n; ++i) {  // ~ blockers: dynamic-lds
        d[i] = a[i];
    }
    LIB_DYNAMIC_SHARED float h[];
    for (int i = 0; i < n; ++i) {  // ~ blockers: dynamic-lds
        h[i] = a[i];
    }
    extern LIB_SHARED float e[];
    for (int i = 0; i < n; ++i) {  // ~ blockers: dynamic-lds
        e[i] = a[i];
    }
    SMEM float t[64];
    LIB_SHARED float u[64];
    for (int i = 0; i < 64; ++i) {  // ~ blockers: none
        // ~^ trip: 64
        t[i] = a[i];
        u[i] = a[i];
    }
}
