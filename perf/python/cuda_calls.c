// Which code asks the CUDA runtime for copies, memsets, allocations and
// synchronisations: an LD_PRELOAD library (the module links the shared
// libcudart, so its calls pass here) that, while the file TREETRAV_TRACE_FILE
// names exists, prints each such call with its stack, a frame as library +
// offset (addr2line -f -C -e LIBRARY OFFSET names it where the library was
// built with its symbols, e.g. TREETRAV_PYTHON_NOSTRIP). Run by
// scripts/device/python-bench.sh with TREETRAV_TRACE_CUDA=1 around one call of
// perf/python/trace_syncs.py.
//   gcc -shared -fPIC -O1 -o cuda_calls.so cuda_calls.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef int cudaError_t;
typedef void* cudaStream_t;
typedef void* cudaEvent_t;

static int tracing(void) {
  char const* marker = getenv("TREETRAV_TRACE_FILE");
  return marker && access(marker, F_OK) == 0;
}

static void trace(char const* what, size_t bytes, int kind) {
  if (!tracing())
    return;
  void* frames[14];
  int const n = backtrace(frames, 14);
  fprintf(stderr, "cuda: %s bytes=%zu kind=%d\n", what, bytes, kind);
  for (int i = 2; i < n; ++i) { // 0: trace, 1: the wrapper
    Dl_info info;
    if (dladdr(frames[i], &info) && info.dli_fname)
      fprintf(stderr, "    %s+0x%lx %s\n", info.dli_fname,
              (unsigned long)((char*)frames[i] - (char*)info.dli_fbase),
              info.dli_sname ? info.dli_sname : "");
    else
      fprintf(stderr, "    %p\n", frames[i]);
  }
}

#define REAL(name, args)                                                                      \
  typedef cudaError_t(*real_type) args;                                                       \
  static real_type real;                                                                      \
  if (!real)                                                                                  \
    real = (real_type)dlsym(RTLD_NEXT, name);

cudaError_t cudaMemcpy(void* dst, void const* src, size_t bytes, int kind) {
  REAL("cudaMemcpy", (void*, void const*, size_t, int))
  trace("cudaMemcpy", bytes, kind);
  return real(dst, src, bytes, kind);
}
cudaError_t cudaMemcpyAsync(void* dst, void const* src, size_t bytes, int kind, cudaStream_t s) {
  REAL("cudaMemcpyAsync", (void*, void const*, size_t, int, cudaStream_t))
  trace("cudaMemcpyAsync", bytes, kind);
  return real(dst, src, bytes, kind, s);
}
cudaError_t cudaMemset(void* p, int value, size_t bytes) {
  REAL("cudaMemset", (void*, int, size_t))
  trace("cudaMemset", bytes, -1);
  return real(p, value, bytes);
}
cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t s) {
  REAL("cudaMemsetAsync", (void*, int, size_t, cudaStream_t))
  trace("cudaMemsetAsync", bytes, -1);
  return real(p, value, bytes, s);
}
cudaError_t cudaMallocAsync(void** p, size_t bytes, cudaStream_t s) {
  REAL("cudaMallocAsync", (void**, size_t, cudaStream_t))
  trace("cudaMallocAsync", bytes, -1);
  return real(p, bytes, s);
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  REAL("cudaStreamSynchronize", (cudaStream_t))
  trace("cudaStreamSynchronize", 0, -1);
  return real(s);
}
cudaError_t cudaDeviceSynchronize(void) {
  REAL("cudaDeviceSynchronize", (void))
  trace("cudaDeviceSynchronize", 0, -1);
  return real();
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  REAL("cudaEventSynchronize", (cudaEvent_t))
  trace("cudaEventSynchronize", 0, -1);
  return real(e);
}
