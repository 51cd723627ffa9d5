#pragma once

#include <memory>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

namespace treetrav {

// What repeated traversals reuse: buffers (REGTT's keys and states, the group
// walk's stacks), the hybrid profile's top-tree column maps, placement plans,
// the GPU's SM table. The caller owns it, as ArborX callers own their
// buffers: it lives as long as the caller wants the reuse (one benchmark, one
// N-body run) and no longer. A strategy finds its own part by type and makes
// it on first use; a traversal given no workspace works in one of its own,
// gone when it returns (same answers, the allocations paid each call).
// Not thread-safe: traversals running at once (a co-run's two streams) each
// hold their own. It holds Kokkos Views: destroy it before Kokkos::finalize.
class Workspace {
public:
  Workspace() = default;
  Workspace(Workspace const&) = delete;
  Workspace& operator=(Workspace const&) = delete;
  Workspace(Workspace&&) = default;
  Workspace& operator=(Workspace&&) = default;

  // The part of type T, default-constructed on first use.
  template <class T>
  T& get() {
    for (auto& [type, part] : parts_)
      if (type == std::type_index(typeid(T)))
        return *static_cast<T*>(part.get());
    parts_.emplace_back(std::type_index(typeid(T)), std::make_shared<T>());
    return *static_cast<T*>(parts_.back().second.get());
  }

  // Drops the part of type T (the next get() makes a new one).
  template <class T>
  void forget() {
    for (auto part = parts_.begin(); part != parts_.end(); ++part)
      if (part->first == std::type_index(typeid(T))) {
        parts_.erase(part);
        return;
      }
  }

  // Drops everything: call it before the data a plan or cache was made for
  // changes shape-for-shape (another tree or query set of the same sizes).
  void clear() { parts_.clear(); }

private:
  std::vector<std::pair<std::type_index, std::shared_ptr<void>>> parts_;
};

} // namespace treetrav
