// Constant trip counts respect the loop variable's type: a loop that only ends by leaving the
// type's range (unsigned wrap-around, narrow-type overflow) has no constant count.
#define TILE 4

__global__ void counts(float* x, unsigned n) {
  for (int i = 0; i < 2 * TILE; ++i) x[i] = 0.f;
  // ~^ blockers: none
  // ~^^ trip: 8
  for (int i = 5; i >= 0; --i) x[i] = 0.f;
  // ~^ blockers: none
  // ~^^ trip: 6
  for (unsigned i = 5; i >= 0; --i) x[i] = 0.f;
  // ~^ blockers: none
  // ~^^ trip: ?
  for (unsigned int i = 0; i < TILE; ++i) x[i] = 0.f;
  // ~^ blockers: none
  // ~^^ trip: 4
  for (size_t i = 8; i >= 0; i -= 2) x[i] = 0.f;
  // ~^ blockers: none
  // ~^^ trip: ?
  for (uint32_t i = 8; i > 0; i -= 2) x[i] = 0.f;
  // ~^ blockers: none
  // ~^^ trip: 4
  for (char i = 0; i < 300; ++i) x[i] = 0.f;
  // ~^ blockers: none
  // ~^^ trip: ?
  for (unsigned char i = 0; i < 255; ++i) x[i] = 0.f;
  // ~^ blockers: none
  // ~^^ trip: 255
  for (int i = 0; i < 3000000000; ++i) x[i] = 0.f;
  // ~^ blockers: none
  // ~^^ trip: ?
  for (long long i = 0; i < 3000000000; i += 1000000000) x[0] = 0.f;
  // ~^ blockers: none
  // ~^^ trip: 3
}
