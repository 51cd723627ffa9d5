#include <treetrav/core/backends.hpp>
#include <treetrav/core/error.hpp>

namespace treetrav {

std::string to_string(Backend backend) {
  switch (backend) {
    case Backend::serial: return "serial";
    case Backend::openmp: return "openmp";
    case Backend::cuda: return "cuda";
  }
  return "unknown";
}

std::vector<Backend> enabled_backends() {
  std::vector<Backend> backends;
#ifdef KOKKOS_ENABLE_CUDA
  backends.push_back(Backend::cuda);
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  backends.push_back(Backend::openmp);
#endif
#ifdef TREETRAV_ENABLE_SERIAL
  backends.push_back(Backend::serial);
#endif
  return backends;
}

Backend default_backend() { return enabled_backends().front(); }

Backend parse_backend(std::string const& name) {
  for (Backend b : enabled_backends())
    if (to_string(b) == name) return b;
  std::string known;
  for (Backend b : enabled_backends()) known += (known.empty() ? "" : ", ") + to_string(b);
  throw InputError("backend", ": '" + name + "' is not an enabled backend (enabled: " + known + ")");
}

}  // namespace treetrav
