// Kernels for the clang-19 code-object tests (gfx942, gfx1100 wave32 and wave64): no HIP
// headers or device libraries exist for these targets here, so the attributes and builtins
// are spelled out.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

struct Pair {
  int a;
  float b;
};

__global__ void axpy(float* y, const float* x, float a, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i < n) y[i] += a * x[i];
}

__global__ __attribute__((amdgpu_flat_work_group_size(1, 128))) void reduce(const float* in, float* out, Pair p) {
  __shared__ float part[128];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  part[t] = in[t] * p.b + p.a;
  __builtin_amdgcn_s_barrier();
  if (t == 0) {
    float s = 0.0f;
    for (int k = 0; k < 128; ++k) s += part[k];
    out[__builtin_amdgcn_workgroup_id_x()] = s;
  }
}

extern "C" __global__ void c_kernel(long* p) { p[__builtin_amdgcn_workitem_id_x()] = 7; }
