// A helper that synchronises the group it is given, for tu/cooperative_groups.cu.
#pragma once
#include <cooperative_groups.h>
template <class Group>
__device__ void group_sync(Group& g) { g.sync(); }
