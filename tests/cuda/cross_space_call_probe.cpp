// Must not compile in a CUDA build (tests/CMakeLists.txt): a KOKKOS_FUNCTION
// that calls a host-only function, as the group walk's scratch_of once called
// scratch_bytes. nvcc left the device side undefined and the kernel aborted
// on every thread ("group walk warp is not aligned").
#include <Kokkos_Core.hpp>

#include <cstddef>

namespace {

struct Scratch {
  static std::size_t bytes(int warps) { return 64 * std::size_t(warps); }
  KOKKOS_FUNCTION static char* at(char* base, int warps) { return base + bytes(warps); }
};

struct Probe {
  Kokkos::View<char*> memory;
  KOKKOS_FUNCTION void operator()(int i) const { *Scratch::at(memory.data(), i) = 1; }
};

} // namespace

void cross_space_call_probe(Kokkos::View<char*> memory) {
  Kokkos::parallel_for("probe", Kokkos::RangePolicy<>(0, 1), Probe{memory});
}
