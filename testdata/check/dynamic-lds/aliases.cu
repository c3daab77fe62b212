// Pointers and references initialised from dynamic shared memory, transitively.
extern __shared__ float smem[];

__global__ void aliases(float* out, int n, int pitch) {
  float* a = smem;
  float* b = a + 4;
  float* row = b + threadIdx.y * pitch;
  float& first = smem[0];
  auto c = reinterpret_cast<float4*>(row);
  float value = out[0];
  float* unrelated = out + 8;
  for (int i = 0; i < n; ++i) row[i] *= 2.f;  // ~ blockers: dynamic-lds
  for (int i = 0; i < n; ++i) first += out[i];  // ~ blockers: dynamic-lds
  for (int i = 0; i < n; ++i) out[i] = c[i].x;  // ~ blockers: dynamic-lds
  for (int i = 0; i < n; ++i) unrelated[i] = value;  // ~ blockers: none
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    out[i] = a_member.smem + i;
  }
}

// A pointer assigned from dynamic LDS after its declaration.
__global__ void assigned_later(float* out, int n, bool flip) {
  float* p;
  float* q = out;
  if (flip) p = smem + 32; else p = smem;
  q = out + 1;
  for (int i = 0; i < n; ++i) p[i] = 0.f;  // ~ blockers: dynamic-lds
  for (int i = 0; i < n; ++i) q[i] = 0.f;  // ~ blockers: none
}
