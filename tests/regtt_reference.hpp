#pragma once

// The visiting order REGTT promises each query, written independently of the
// engine (a queue of nodes, no heap positions or bit arrays), on the host:
// a breadth-first walk of the nodes above depth d, children queued in slot
// order when visit() descends at a non-leaf; then, depth-first over what that
// walk reached, children in slot order or, for guided visitors, the child
// first_child() named at breadth-first time first, the frontier nodes (depth
// d) in that order, each walked depth-first as autoropes does. For sums in
// floating point (Barnes-Hut) REGTT's results must equal this bit for bit.
#include <treetrav/core/config.hpp>
#include <treetrav/kernels/visitor.hpp>

#include <vector>

namespace treetrav::test {

template <class Topology, class Visitor>
void regtt_reference(Topology const& topology, Visitor const& visitor, int depth) {
  struct Entry {
    Index node;
    int level;
    bool descended = false;
    int first = 0;
    std::vector<long> child; // queue entry of each slot's child, -1 if none
  };
  auto walk = [&](auto&& self, Index node, Index query,
                  typename Visitor::state_type& state) -> void {
    if (!visitor.visit(node, query, state) || topology.is_leaf(node))
      return;
    int const first = Visitor::guided ? visitor.first_child(node, query, state) : 0;
    for (int rank = 0; rank < Topology::arity; ++rank) {
      Index const child = topology.child(node, detail::child_slot(rank, first));
      if (child >= 0)
        self(self, child, query, state);
    }
  };
  for (Index query = 0; query < visitor.query_count(); ++query) {
    typename Visitor::state_type state;
    visitor.initialize(query, state);
    if (depth == 0) {
      walk(walk, Topology::root(), query, state);
      visitor.finalize(query, state);
      continue;
    }
    std::vector<Entry> queue{{Topology::root(), 0}};
    for (std::size_t e = 0; e < queue.size(); ++e) {
      if (queue[e].level == depth)
        continue; // the frontier: walked depth-first below
      Index const node = queue[e].node;
      if (!visitor.visit(node, query, state) || topology.is_leaf(node))
        continue;
      queue[e].descended = true;
      queue[e].first = Visitor::guided ? visitor.first_child(node, query, state) : 0;
      queue[e].child.assign(Topology::arity, -1);
      for (int slot = 0; slot < Topology::arity; ++slot) {
        Index const child = topology.child(node, slot);
        if (child < 0)
          continue;
        queue[e].child[slot] = static_cast<long>(queue.size());
        queue.push_back({child, queue[e].level + 1});
      }
    }
    // Depth-first over the reached top tree.
    auto top = [&](auto&& self, std::size_t e) -> void {
      if (queue[e].level == depth)
        return walk(walk, queue[e].node, query, state);
      if (!queue[e].descended)
        return;
      for (int rank = 0; rank < Topology::arity; ++rank) {
        long const child = queue[e].child[detail::child_slot(rank, queue[e].first)];
        if (child >= 0)
          self(self, static_cast<std::size_t>(child));
      }
    };
    top(top, 0);
    visitor.finalize(query, state);
  }
}

} // namespace treetrav::test
