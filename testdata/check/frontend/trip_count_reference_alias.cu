// A loop variable bound to a non-const reference in the body may be written through it: the
// loop has no constant trip count. Copies of it do not matter.
__global__ void k(float* x) {
  for (int i = 0; i < 8; ++i) { int& r = i; r += 2; x[r] = 0.f; }
  // ~^ blockers: none
  // ~^^ trip: ?
  for (int i = 0; i < 8; ++i) { auto& r = i; x[r] = 0.f; }
  // ~^ blockers: none
  // ~^^ trip: ?
  for (int i = 0; i < 8; ++i) { int c = i; c += 2; x[c] = 0.f; }
  // ~^ blockers: none
  // ~^^ trip: 8
}

// Passed to a non-const reference parameter of a function of this file: may be written.
__device__ void bump(int& v) { v += 1; }
__device__ float peek(const int& v, float* x) { return x[v]; }
__device__ float by_value(int v, float* x) { return x[v]; }
__global__ void calls(float* x) {
  for (int i = 0; i < 8; ++i) { bump(i); x[i] = 0.f; }
  // ~^ blockers: none
  // ~^^ trip: ?
  for (int i = 0; i < 8; ++i) x[i] = peek(i, x) + by_value(i, x);
  // ~^ blockers: none
  // ~^^ trip: 8
}
