#pragma once

#include <Kokkos_Core.hpp>

#include <string>

namespace treetrav::detail {

// A Kokkos profiling region that is popped however the scope ends (validation
// throws from inside its region).
class ProfilingRegion {
public:
  explicit ProfilingRegion(std::string const& name) { Kokkos::Profiling::pushRegion(name); }
  ~ProfilingRegion() { Kokkos::Profiling::popRegion(); }
  ProfilingRegion(ProfilingRegion const&) = delete;
  ProfilingRegion& operator=(ProfilingRegion const&) = delete;
};

} // namespace treetrav::detail
