// `break` blocks the loop it ends; inner-loop and switch breaks, and `continue`, do not.
__global__ void breaks(const int* keys, int* found, int n, int probe) {
  for (int i = 0; i < 16; ++i) {  // ~ blockers: early-exit
    if (keys[i] == probe) { found[0] = i; break; }
  }
  for (int i = 0; i < 16; ++i) {  // ~ blockers: none
    for (int j = 0; j < 16; ++j) {  // ~ blockers: early-exit
      if (keys[j] == i) break;
    }
  }
  for (int i = 0; i < 16; ++i) {  // ~ blockers: none
    switch (keys[i]) {
      case 0: found[i] = 1; break;
      default: break;
    }
  }
  for (int i = 0; i < 16; ++i) {  // ~ blockers: none
    if (keys[i] < 0) continue;
    found[i] = keys[i];
  }
  while (true) {  // ~ blockers: early-exit
    switch (keys[0]) { case 1: continue; default: break; }
    if (found[0]) break;
  }
}
