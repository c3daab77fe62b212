//! `vgpr-pressure`: judges an unrolled variant by the registers, spills, scratch and occupancy
//! of its compiled code object against the baseline's. (Being written: issue 3.)
