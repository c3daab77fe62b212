// A conditional group that opens a brace and another that closes it (rocBLAS's
// `#if DEVICE_GRID_YZ_16BIT` around a loop header and its `}`): the grammar reads each group
// alone, and the unbalanced braces broke the parse of the whole file (its kernels and their
// barrier loops were lost). The directive lines are left out of the parse: the code reads as
// if the condition held (a manual rewrite of these loops is refused: a directive in the body).
#define KERNEL(lb_) static __global__ __launch_bounds__((lb_)) void

__device__ void tile_sync(float* s) {
  s[threadIdx.x] = 0.f;
  __syncthreads();
}

__global__ void grid_loops(float* s, int n, int m) {
  for (int j = 0; j < m; ++j)  // ~ blockers: barrier
  {
#if WIDE_GRID
    for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
#endif
      s[j] += 1.f;
      tile_sync(s);
#if WIDE_GRID
    }
#endif
  }
  for (int i = 0; i < n; ++i) s[i] = 0.f;  // ~ blockers: none
}

template <int DIM_X>
KERNEL(DIM_X)
batched(int n, const float* __restrict__ xa, float* ya, float* s, int batch_count)
{
  int tid = blockIdx.x * DIM_X + threadIdx.x;
  unsigned batch = blockIdx.z;

#if DEVICE_GRID_YZ_16BIT
  for(; batch < batch_count; batch += 65535)  // ~ blockers: barrier
  {
#endif

    const float* x = xa + batch * n;
    if(tid < n)
    {
      ya[tid] = x[tid];
    }
    tile_sync(s);

#if DEVICE_GRID_YZ_16BIT
  }
#endif
}

template <int DIM_X>
KERNEL(DIM_X)
batched_pairs(int n, const float* __restrict__ xa, float* ya, int batch_count)
{
  int tid = (blockIdx.x * DIM_X + threadIdx.x) * 2;
  unsigned batch = blockIdx.z;

#if DEVICE_GRID_YZ_16BIT
  for(; batch < batch_count; batch += 65535)  // ~ blockers: none
  {
#endif

    const float* x = xa + batch * n;
    if(tid < n - 1)
    {
      for(int j = 0; j < 2; ++j)  // ~ blockers: none
      // ~^ trip: 2
      {
        ya[tid + j] = x[tid + j];
      }
    }

#if DEVICE_GRID_YZ_16BIT
  }
#endif
}

__global__ void after_the_groups(float* s, int n) {
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    s[i] = 1.f;
    __syncthreads();
  }
#ifdef BALANCED
  for (int i = 0; i < n; ++i) s[i] += 2.f;  // ~ blockers: none
#else
  for (int i = 0; i < n; ++i) s[i] += 3.f;  // ~ blockers: none
#endif
}
