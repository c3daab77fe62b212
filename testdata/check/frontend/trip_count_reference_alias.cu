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
