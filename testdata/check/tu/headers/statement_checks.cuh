// Statement macros of a library, each with its own `;` (written without one where used).
#define HEADER_SYNC __syncthreads();
#define HEADER_CHECK static_assert(sizeof(int) == 4, "int");
