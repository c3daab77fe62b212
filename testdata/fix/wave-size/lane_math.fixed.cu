// Lane and warp arithmetic on thread ids, in a helper and a kernel: converted together.
__device__ int lane_of(int tid) { return tid & (warpSize - 1); }

__global__ void lanes(int* out) {
  int lane = threadIdx.x % warpSize;
  int warp = (threadIdx.x + 1) / warpSize;
  out[threadIdx.x] = lane + warp + lane_of(threadIdx.x);
}
