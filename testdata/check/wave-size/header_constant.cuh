// A header of constants, with no function: the warp size in it is reported all the same.
#pragma once
namespace cfg {
constexpr int warp_size = 32;  // ~ diag: wave-size
constexpr int block_size = 256;
}
