// Every loop kind is a candidate when nothing blocks it.
__device__ float kinds(float* a, int n) {
  float s = 0.f;
  for (int i = 0; i < 4; ++i) s += a[i];  // ~ blockers: none
  while (n > 0) { s += a[n]; --n; }  // ~ blockers: none
  do { s *= 0.5f; } while (s > 1.f);  // ~ blockers: none
  for (float x : {1.f, 2.f, 3.f}) s += x;  // ~ blockers: none
  return s;
}
