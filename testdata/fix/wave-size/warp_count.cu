// A warp index and the number of warps are converted together, never one without the other.
__global__ void reduce(float* out, const float* in) {
  __shared__ float partial[32];
  int warp = threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  int nwarps = blockDim.x / 32;
  float v = in[threadIdx.x];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down(v, o);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (threadIdx.x < nwarps) out[threadIdx.x] = partial[threadIdx.x];
}
