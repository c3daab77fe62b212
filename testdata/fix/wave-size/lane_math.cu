// Lane and warp arithmetic on thread ids; `>> 5` has no fix and stays reported.
__device__ int lane_of(int tid) { return tid & 31; }

__global__ void lanes(int* out, int width) {
  int lane = threadIdx.x % 32;
  int warp = (threadIdx.x + 1) / 32;
  int w2 = threadIdx.x >> 5;
  int tiles = width / 32;
  out[threadIdx.x] = lane + warp + w2 + tiles + lane_of(threadIdx.x);
}
