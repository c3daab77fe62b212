// Warp barriers: `__syncwarp` and `__builtin_amdgcn_wave_barrier`, directly, through a
// `__device__` helper, a macro and a lambda. Warp data exchanges, votes, fences and
// `s_waitcnt` are not synchronisation (see `hip-unroll explain barrier`) and must not block.
#define WARP_SYNC(mask) __syncwarp(mask)
__device__ void warp_step(float* v) { v[threadIdx.x] += 1.f; __syncwarp(); }

__global__ void warps(float* v, int n, unsigned mask) {
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    v[i] += 1.f;
    __syncwarp(mask);
  }
  for (int i = 0; i < n; ++i) warp_step(v);
  // ~^ blockers: barrier
  for (int i = 0; i < n; ++i) { WARP_SYNC(mask); }
  // ~^ blockers: barrier
  auto step = [&]() { __syncwarp(); };
  for (int i = 0; i < n; ++i) step();
  // ~^ blockers: barrier
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    __builtin_amdgcn_wave_barrier();
  }
  // Not synchronisation.
  float s = v[threadIdx.x];
  for (int off = warpSize / 2; off > 0; off /= 2) {  // ~ blockers: none
    s += __shfl_down_sync(__activemask(), s, off);
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    if (__ballot_sync(mask, v[i] > 0.f) && __any_sync(mask, v[i] < 0.f)) v[i] = 0.f;
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    v[i] = s;
    __threadfence_block();
    __threadfence();
    __builtin_amdgcn_s_waitcnt(0);
    __builtin_amdgcn_sched_barrier(0);
  }
  v[0] = s;
}
