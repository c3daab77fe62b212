// Index macros over the kernel's own parameters, in a header of their own (found with `-I`).
#pragma once
#define lu(c, i, j) a_lu[(c) * n * n + (j) * n + (i)]
#define u(c, i, j) a_u[(c) * n * n + (j) * n + (i)]
