// A class with synchronising members, for tu/member_function.cu.
#pragma once
struct Tile {
  float* s;
  int* c;
  __device__ void load(float v) { s[threadIdx.x] = v; __syncthreads(); }
  __device__ void tally() { atomicAdd(c, 1); }
  __device__ float value() const { return s[0]; }
};
