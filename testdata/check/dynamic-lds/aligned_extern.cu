// `extern __shared__ __align__(16) T name[]`: tree-sitter reads `__align__(...)` as a type and
// a parenthesised declarator holding an ERROR; the array is still dynamic shared memory.
__global__ void aligned(float* x) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float* s = reinterpret_cast<float*>(smem_raw);
  for (int i = 0; i < 8; ++i) smem_raw[i] = 0;
  // ~^ blockers: dynamic-lds
  for (int i = 0; i < 8; ++i) s[i] = x[i];
  // ~^ blockers: dynamic-lds
  __shared__ __align__(16) float tile[64];
  for (int i = 0; i < 8; ++i) tile[i] = x[i];
  // ~^ blockers: none
}
