// treetrav info: versions, enabled backends, and the GPU when CUDA is on.
#include "common.hpp"

#include <treetrav/io/hdf5.hpp>
#include <treetrav/version.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime.h>
#endif

#include <iostream>

namespace treetrav::cli {
namespace {

nlohmann::json collect_info() {
  nlohmann::json info;
  info["treetrav"] = TREETRAV_VERSION_STRING;
  info["kokkos"] = fmt::format("{}.{}.{}", KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100,
                               KOKKOS_VERSION % 100);
  info["hdf5"] = io::hdf5_library_version();
  info["compiler"] = __VERSION__;
  nlohmann::json backends = nlohmann::json::array();
  for (Backend b : enabled_backends()) backends.push_back(to_string(b));
  info["backends"] = backends;
  info["default_backend"] = to_string(default_backend());
  info["host_threads"] = Kokkos::DefaultHostExecutionSpace::concurrency();
#ifdef KOKKOS_ENABLE_CUDA
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  info["cuda_runtime"] = fmt::format("{}.{}", runtime / 1000, runtime % 1000 / 10);
  int device = 0;
  cudaDeviceProp prop{};
  cudaError_t status = cudaGetDevice(&device);
  if (status == cudaSuccess) status = cudaGetDeviceProperties(&prop, device);
  if (status != cudaSuccess) throw std::runtime_error(std::string("CUDA: ") + cudaGetErrorString(status));
  info["device"] = {{"name", prop.name},
                    {"compute_capability", fmt::format("{}.{}", prop.major, prop.minor)},
                    {"multiprocessors", prop.multiProcessorCount},
                    {"memory_gib", static_cast<double>(prop.totalGlobalMem) / (1u << 30)},
                    {"warp_size", prop.warpSize}};
#endif
  return info;
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto* command = app.add_subcommand("info", "Print versions, enabled Kokkos backends and the GPU");
  auto options = std::make_shared<RuntimeOptions>();
  auto as_json = std::make_shared<bool>(false);
  add_runtime_options(*command, *options, false);
  command->add_flag("--json", *as_json, "Print machine-readable JSON");
  command->callback([options, as_json] {
    KokkosSession session(*options);
    auto info = collect_info();
    if (*as_json) {
      std::cout << info.dump(2) << '\n';
      return;
    }
    fmt::print("treetrav {}\n", info["treetrav"].get<std::string>());
    fmt::print("  Kokkos      {}\n", info["kokkos"].get<std::string>());
    fmt::print("  HDF5        {}\n", info["hdf5"].get<std::string>());
    fmt::print("  compiler    {}\n", info["compiler"].get<std::string>());
    std::string backends;
    for (auto const& b : info["backends"]) backends += (backends.empty() ? "" : ", ") + b.get<std::string>();
    fmt::print("  backends    {} (default {})\n", backends, info["default_backend"].get<std::string>());
    fmt::print("  host threads {}\n", info["host_threads"].get<int>());
    if (info.contains("device")) {
      auto const& d = info["device"];
      fmt::print("  CUDA        runtime {}\n", info["cuda_runtime"].get<std::string>());
      fmt::print("  device      {} (compute capability {}), {} SMs, {:.1f} GiB\n", d["name"].get<std::string>(),
                 d["compute_capability"].get<std::string>(), d["multiprocessors"].get<int>(),
                 d["memory_gib"].get<double>());
    }
  });
}

}  // namespace treetrav::cli
