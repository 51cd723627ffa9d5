#include <cstdio>
#include <chrono>
#include <vector>
#include <cuda_runtime.h>
__global__ void touch(char* p, size_t n) { size_t i = (size_t(blockIdx.x) * blockDim.x + threadIdx.x) * 4096; if (i < n) p[i] = 1; }
int main() {
  // One step's allocations at 1M bodies (bytes), roughly: build, multipoles, walk.
  std::vector<size_t> sizes = {8<<20, 8<<20, 4<<20, 4<<20, 20<<20, 12<<20, 4<<20, 1<<20, 2<<20, 4<<20, 1600000, 1600000, 800000, 800000, 256,
                               6400000, 800000, 800000, 800000, 2400000, 800000, 800000, 2400000, 800000, 6400000, 16000000, 5600000,
                               800000, 800000, 800000, 400000, 4<<20, 4<<20};
  std::vector<char*> p(sizes.size());
  cudaFree(0);
  for (int mode = 0; mode < 3; ++mode) {
    double best = 1e9, sum = 0; int reps = 30;
    for (int r = 0; r < reps; ++r) {
      cudaDeviceSynchronize();
      auto t0 = std::chrono::steady_clock::now();
      for (size_t k = 0; k < sizes.size(); ++k) {
        if (mode == 0) cudaMalloc(&p[k], sizes[k]);
        else if (mode == 1) cudaMallocAsync(&p[k], sizes[k], 0);
        else if (r == 0) cudaMalloc(&p[k], sizes[k]);
        size_t pages = (sizes[k] + 4095) / 4096;
        touch<<<(pages + 255) / 256, 256>>>(p[k], sizes[k]);
      }
      for (size_t k = 0; k < sizes.size(); ++k) {
        if (mode == 0) cudaFree(p[k]);
        else if (mode == 1) cudaFreeAsync(p[k], 0);
      }
      cudaDeviceSynchronize();
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      if (r >= 5) { sum += us; if (us < best) best = us; }
    }
    if (mode == 2) for (auto q : p) cudaFree(q);
    printf("%s: %zu buffers, mean %.1f us, best %.1f us per step\n", mode == 0 ? "cudaMalloc/cudaFree" : mode == 1 ? "cudaMallocAsync pool" : "reused", sizes.size(), sum / (reps - 5), best);
  }
  printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
}
