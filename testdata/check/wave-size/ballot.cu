// Ballots compared with a 32-bit full mask.
__global__ void votes(int* out, const float* in) {
  bool all_pos = __ballot(in[threadIdx.x] > 0.f) == 0xffffffff;  // ~ diag: wave-size
  bool any = __ballot(in[threadIdx.x] > 0.f) != 0;
  unsigned long long full = __ballot(1);
  out[threadIdx.x] = all_pos + any + (full == ~0ull);
}
