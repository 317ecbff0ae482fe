# Build step of bfly_add_kernels (bflyKernels.cmake): wraps bfly-gen's ahead-of-time header GENERATED into HEADER,
# adding NAME_launch, which forwards to the generated <kernel_name>_launch. HEADER is rewritten only when its
# content changes, so an unchanged kernel rebuilds nothing.
# Run as: cmake -DGENERATED=<file> -DHEADER=<file> -DNAME=<identifier> -DSPEC=<spec> -P bflyKernelHeader.cmake
file(READ "${GENERATED}" text)
if(NOT text MATCHES "\n// ([A-Za-z_][A-Za-z0-9_]*): ahead-of-time header written by bfly-gen")
  message(FATAL_ERROR "${GENERATED} is not an ahead-of-time header of bfly-gen")
endif()
set(kernel "${CMAKE_MATCH_1}")
string(TOUPPER "${NAME}" guard)
file(WRITE "${HEADER}.tmp"
"${text}
// ${NAME}: written by bfly_add_kernels from the spec \"${SPEC}\": the kernel above, ${kernel}, launched by
// ${NAME}_launch(...), which takes the arguments of ${kernel}_launch.
#ifndef BFLY_KERNELS_${guard}_ALIAS
#define BFLY_KERNELS_${guard}_ALIAS
#define ${NAME}_kernel_name \"${kernel}\"
#ifdef __CUDACC__
template <typename... Args>
inline cudaError_t ${NAME}_launch(Args&&... args) {
  return ${kernel}_launch(static_cast<Args&&>(args)...);
}
#endif  // __CUDACC__
#endif  // BFLY_KERNELS_${guard}_ALIAS
")
file(COPY_FILE "${HEADER}.tmp" "${HEADER}" ONLY_IF_DIFFERENT)
file(REMOVE "${HEADER}.tmp")
