#pragma once

#include <treetrav/core/allocate.hpp>
#include <treetrav/core/detail/growing_buffer.hpp>
#include <treetrav/core/workspace.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace treetrav::detail {

// The buffers a Workspace keeps for WorkspaceArrays, one per name.
template <class MemorySpace>
struct NamedBuffers {
  std::vector<std::pair<std::string, std::unique_ptr<GrowingBuffer<MemorySpace>>>> buffers;

  GrowingBuffer<MemorySpace>& operator[](std::string const& name) {
    for (auto& [kept, buffer] : buffers)
      if (kept == name) return *buffer;
    buffers.emplace_back(name, std::make_unique<GrowingBuffer<MemorySpace>>(name));
    return *buffers.back().second;
  }
};

// Where a call's arrays come from. Without a workspace: fresh allocations,
// freed with their last view. With the caller's workspace: buffers it keeps by
// name, so that calls repeated on data of about the same size (an N-body
// run's tree and walk, every step) allocate nothing once the buffers have
// grown. On a GPU each allocation is a cudaMalloc and a blocking copy of its
// header, and its release a cudaFree, each waiting for the device: a build
// and a walk made thirty of them a step. An array from a workspace is valid
// while the workspace lives and until the next request of its name, which
// reuses the memory.
template <class ExecutionSpace>
class WorkspaceArrays {
public:
  WorkspaceArrays(ExecutionSpace const& space, Workspace* workspace) : space_(space), workspace_(workspace) {}

  // An uninitialised array of `extents` of View's type named `name`.
  template <class View, class... Extents>
  View make(std::string const& name, Extents... extents) const {
    using MemorySpace = typename View::memory_space;
    static_assert(std::is_same_v<typename ExecutionSpace::memory_space, MemorySpace>,
                  "arrays live in the execution space's memory space");
    if (workspace_ == nullptr)
      return allocate_view<View>(Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, name), extents...);
    using Value = typename View::non_const_value_type;
    static_assert(alignof(Value) <= 64, "the buffers are aligned to 64 bytes");
    std::size_t const bytes = View::required_allocation_size(static_cast<std::size_t>(extents)...);
    auto& buffer = workspace_->get<NamedBuffers<MemorySpace>>()[name];
    auto const memory = buffer.template get<unsigned char>(space_, bytes, true);
    return View(reinterpret_cast<Value*>(memory.data()), static_cast<std::size_t>(extents)...);
  }

  ExecutionSpace const& space() const { return space_; }
  Workspace* workspace() const { return workspace_; }

private:
  ExecutionSpace space_;
  Workspace* workspace_;
};

// The caller's workspace a strategy carries (a placed strategy's, inside
// it), or none.
template <class Strategy, class = void>
struct carries_workspace : std::false_type {};
template <class Strategy>
struct carries_workspace<Strategy, std::void_t<decltype(std::declval<Strategy>().workspace)>>
    : std::true_type {};
template <class Strategy, class = void>
struct wraps_strategy : std::false_type {};
template <class Strategy>
struct wraps_strategy<Strategy, std::void_t<decltype(std::declval<Strategy>().strategy)>>
    : std::true_type {};
template <class Strategy>
Workspace* workspace_of(Strategy const& strategy) {
  if constexpr (carries_workspace<Strategy>::value)
    return strategy.workspace;
  else if constexpr (wraps_strategy<Strategy>::value)
    return workspace_of(strategy.strategy);
  else
    return nullptr;
}

// `strategy` with `workspace` as its workspace (a placed strategy's, inside it).
template <class Strategy>
Strategy with_workspace_set(Strategy strategy, Workspace* workspace) {
  if constexpr (carries_workspace<Strategy>::value)
    strategy.workspace = workspace;
  else if constexpr (wraps_strategy<Strategy>::value)
    strategy.strategy = with_workspace_set(strategy.strategy, workspace);
  return strategy;
}

} // namespace treetrav::detail
