// HIP_DYNAMIC_SHARED(type, name) with and without a semicolon, and the attribute form.
#include <hip/hip_runtime.h>

__global__ void hip_dyn(float* out, int n) {
  HIP_DYNAMIC_SHARED(float, buf)
  HIP_DYNAMIC_SHARED(double, dbuf);
  extern __shared__ HIP_DYNAMIC_SHARED_ATTRIBUTE int attr_buf[];
  for (int i = 0; i < n; ++i) buf[i] = out[i];  // ~ blockers: dynamic-lds
  for (int i = 0; i < n; ++i) out[i] = dbuf[i];  // ~ blockers: dynamic-lds
  for (int i = 0; i < n; ++i) attr_buf[i] = i;  // ~ blockers: dynamic-lds
  for (int i = 0; i < n; ++i) out[i] = 0.f;  // ~ blockers: none
}
