// hip-unroll-test: loop=8 factor=4 mode=manual
// A template index type: limits come from `decltype(j)`, asserted to be an integer type.
template <class J, class T>
__global__ void csr_row_sum(const J* row_ptr, const T* val, T* out, J row) {
    T sum = 0;
    const J begin = row_ptr[row];
    const J end = row_ptr[row + 1];
    {
        J j = begin;
        static_assert((decltype(j))1 / 2 == 0 && sizeof(decltype(j)) <= 8, "hip-unroll: `j` must be an integer of at most 64 bits");
        for (; j <= ((((decltype(j))1 << (sizeof(decltype(j)) * 8 - 2)) - 1) * 2 + 1) - 3 && (j >= 0 || ((decltype(j))(j + 3)) < 0) && ((decltype(j))(j + 3)) < end; j += 4) {
            {
                sum += val[j];
            }
            {
                sum += val[((decltype(j))(j + 1))];
            }
            {
                sum += val[((decltype(j))(j + 2))];
            }
            {
                sum += val[((decltype(j))(j + 3))];
            }
        }
        for (; j < end; ++j) {
            sum += val[j];
        }
    }
    out[row] = sum;
}
template __global__ void csr_row_sum<int, float>(const int*, const float*, float*, int);
