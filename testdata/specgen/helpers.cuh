// Device helpers for signatures.cu: the only stores of fill_through_helper's output are here.
#pragma once

__device__ inline void store_scaled(float* p, float v, float s) { *p = v * s; }

__device__ inline void store_pair(float* p, float a, float b) {
    store_scaled(p, a, 1.0f);
    p[1] = b;
}
