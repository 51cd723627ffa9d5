// Does a GPU-aware MPI (UCX cuda_ipc) deliver the current contents of a
// device buffer that was freed and allocated again (perhaps at the same
// address) between messages? Two or more ranks, every round each rank sends
// every other rank a part of a buffer filled with the round's pattern.
#include <mpi.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); MPI_Abort(MPI_COMM_WORLD, 3);} } while (0)
__global__ void fill(unsigned char* p, size_t n, int seed) { for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) p[i] = (unsigned char)(i * 7 + seed); }
__global__ void check(unsigned char const* p, size_t n, int seed, size_t off, int* bad) { for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) if (p[i] != (unsigned char)((i + off) * 7 + seed)) atomicAdd(bad, 1); }
struct Buf { unsigned char* p = nullptr; size_t cap = 0; std::vector<void*> retired; };
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, P; MPI_Comm_rank(MPI_COMM_WORLD, &r); MPI_Comm_size(MPI_COMM_WORLD, &P);
  int ndev; CK(cudaGetDeviceCount(&ndev)); CK(cudaSetDevice(r % ndev));
  char const* mode = argc > 1 ? argv[1] : "regrow"; // regrow | fresh | keep (never free while running)
  size_t const mib = 1 << 20;
  size_t sizes[] = {1, 4, 2, 16, 8, 32, 1, 48, 3, 64, 5, 64, 2, 40};
  Buf s, d; int* bad; CK(cudaMallocManaged(&bad, 4));
  std::set<void*> freed; int reused = 0, total_bad = 0;
  auto get = [&](Buf& b, size_t bytes) {
    bool const grow = bytes > b.cap || !strcmp(mode, "fresh");
    if (!grow) return;
    CK(cudaDeviceSynchronize());
    void* old = b.p;
    if (!strcmp(mode, "keep")) { if (old) b.retired.push_back(old); }
    else if (old) { CK(cudaFree(old)); freed.insert(old); }
    size_t const cap = bytes + bytes / 8;
    CK(cudaMalloc((void**)&b.p, cap)); b.cap = cap;
    if (freed.count(b.p)) ++reused;
  };
  for (int round = 0; round < int(sizeof sizes / sizeof *sizes); ++round) {
    size_t const part = sizes[round] * mib + 4096 * round, bytes = part * P;
    get(s, bytes); get(d, bytes);
    fill<<<264, 256>>>(s.p, bytes, r * 31 + round); CK(cudaDeviceSynchronize());
    std::vector<MPI_Request> q;
    for (int o = 0; o < P; ++o) if (o != r) { q.emplace_back(); MPI_Irecv(d.p + o * part, int(part), MPI_BYTE, o, round, MPI_COMM_WORLD, &q.back()); }
    for (int o = 0; o < P; ++o) if (o != r) { q.emplace_back(); MPI_Isend(s.p + r * part, int(part), MPI_BYTE, o, round, MPI_COMM_WORLD, &q.back()); }
    MPI_Waitall(int(q.size()), q.data(), MPI_STATUSES_IGNORE);
    *bad = 0; CK(cudaDeviceSynchronize());
    for (int o = 0; o < P; ++o) if (o != r) check<<<264, 256>>>(d.p + o * part, part, o * 31 + round, o * part, bad);
    CK(cudaDeviceSynchronize());
    int b = *bad, tb; MPI_Allreduce(&b, &tb, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    total_bad += tb;
    if (r == 0 && tb) printf("[%s] round %d (%zu MiB a part): %d wrong bytes\n", mode, round, sizes[round], tb);
  }
  int all_reused; MPI_Allreduce(&reused, &all_reused, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (r == 0) printf("[%s] %d ranks, %zu rounds: %d allocations at a freed address, %d wrong bytes in all (UCX_CUDA_IPC_CACHE=%s)\n", mode, P, sizeof sizes / sizeof *sizes, all_reused, total_bad, getenv("UCX_CUDA_IPC_CACHE") ? getenv("UCX_CUDA_IPC_CACHE") : "default");
  MPI_Finalize();
}
