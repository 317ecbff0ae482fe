// Internal to bfly_lda_gpu: the primary context of a given device, for code that drives several GPUs from one
// process (bfly::rt::current_context() only knows device 0's).
#pragma once

namespace bfly::lda::detail {

// Makes CUDA device `ordinal`'s primary context current on the calling thread (retained on first use, kept for
// the life of the process). Throws bfly::Error for a bad ordinal or a driver error.
void make_device_current(int ordinal);

}  // namespace bfly::lda::detail
