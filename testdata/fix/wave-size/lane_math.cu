// Lane and warp arithmetic on thread ids, in a helper and a kernel: converted together.
__device__ int lane_of(int tid) { return tid & 31; }

__global__ void lanes(int* out) {
  int lane = threadIdx.x % 32;
  int warp = (threadIdx.x + 1) / 32;
  out[threadIdx.x] = lane + warp + lane_of(threadIdx.x);
}
