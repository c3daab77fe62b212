// Comments and string literals never trigger a rule.
__global__ void quiet(float* out, const char** msgs) {
  for (int i = 0; i < 8; ++i) {  // ~ blockers: none
    // __syncthreads();   grid.sync();
    /* __syncthreads(); atomicAdd(&x, 1); return; */
    out[i] = 1.f;
    msgs[i] = "__syncthreads(); atomicAdd(p, 1); break;";
    msgs[i] = R"raw(__syncthreads() extern __shared__ float smem[];)raw";
  }
}
