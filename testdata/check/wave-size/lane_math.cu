// Lane and warp arithmetic on thread/lane ids; the same arithmetic on other values is fine.
__device__ int lane_of(int tid) { return tid & 31; }  // ~ diag: wave-size

__global__ void lanes(float* out, int width, int n) {
  int lane = threadIdx.x % 32;  // ~ diag: wave-size
  int warp = threadIdx.x / 32;  // ~ diag: wave-size
  int t = threadIdx.x + blockIdx.x * blockDim.x;
  int w2 = t >> 5;  // ~ diag: wave-size
  int l2 = __lane_id() & 31;  // ~ diag: wave-size
  // Clean: warpSize, and % 32 / 32 on values that are not thread or lane ids.
  int good_lane = threadIdx.x % warpSize;
  int tiles = width / 32;
  int rem = n % 32;
  int col = blockIdx.x * 32;
  out[t] = lane + warp + w2 + l2 + good_lane + tiles + rem + col;
}
