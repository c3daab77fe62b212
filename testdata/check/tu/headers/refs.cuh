// Helpers that return references, declared with a specifier macro of another header.
#pragma once
#include "dinline.cuh"
DINLINE float& header_sync_ref(float* s, int i) { __syncthreads(); return s[i]; }
DINLINE auto& header_count_ref(int* c) { atomicAdd(c, 1); return c[0]; }
DINLINE const float& header_plain_ref(const float* s, int i) { return s[i]; }
