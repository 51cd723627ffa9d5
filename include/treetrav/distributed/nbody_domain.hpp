#pragma once

// nbody::Domain over MPI ranks: the locally essential tree exchange of
// distributed N-body runs.
#include <treetrav/distributed/communicator.hpp>
#include <treetrav/nbody/domain.hpp>

namespace treetrav::distributed {

// The essential tree of a rank, exactly the cells of the octree over all
// ranks' bodies that its walks can reach:
//   1. the cube around all bodies (MPI_Allreduce of the ranks' boxes) and
//      every body's Morton code in it, as one process computes them;
//   2. the cells holding bodies of several ranks ("shared"), level by level
//      from the root: each rank counts its bodies in the octants of the
//      shared cells that split (MPI_Allgather); an octant with bodies on
//      one rank only is that rank's "branch", whose subtree that rank builds
//      alone, bit for bit as one process would (its bodies and their order
//      are the same); a shared cell of at most leaf-size bodies is a leaf,
//      whose bodies every rank gathers (MPI_Allgatherv);
//   3. every rank sends every other the pruned preorder of its branches:
//      a cell that every box of the receiver's reach takes whole, by the
//      walk's criterion with a margin for float rounding, as its moments,
//      else its children or, for a leaf, its bodies (MPI_Alltoallv). The
//      reach: the top's cells holding the receiver's bodies (its branches,
//      the shared leaves where it has bodies), each cut to its box, as at
//      most 64 hulls of runs of them along the curve; for group walks also
//      the shared cells where a group may mix the receiver's bodies with
//      others' (a group's box spans all its bodies);
//   4. the shared cells' moments from their children in slot order (the
//      bottom-up sums of compute_octree_moments/quadrupoles, in double).
// A body's walk then opens and takes whole exactly the cells it would in the
// octree of all bodies, with the same moments: per-body strategies give the
// one-process forces bit for bit on host backends.
class NbodyDomain final : public nbody::Domain {
public:
  explicit NbodyDomain(Communicator const& comm) : comm_(comm) {}
  int rank() const override { return comm_.rank(); }
  int ranks() const override { return comm_.size(); }
  std::int64_t min(std::int64_t value) const override;
  std::int64_t sum(std::int64_t value) const override;
  nbody::EssentialTree
  essential_tree(Kokkos::View<Coordinate**, Kokkos::LayoutLeft, Kokkos::HostSpace> x,
                 Kokkos::View<Coordinate*, Kokkos::HostSpace> masses,
                 Kokkos::View<std::int64_t*, Kokkos::HostSpace> rows,
                 BarnesHutOptions const& options, int leaf_size, bool quadrupoles,
                 int group_size) const override;
  nbody::BodyStates partition(nbody::BodyStates const& held) const override;
  nbody::BodyStates by_rows(nbody::BodyStates const& local) const override;
  nbody::Diagnostics measure(io::Snapshot const& rows) const override;
  io::Collective writers() const override { return io::Collective{comm_.get()}; }

private:
  Communicator comm_;
};

// Collective: throws InputError on every rank, naming `what` and an id, when
// one particle id appears twice among the ranks' `ids` (each rank its rows of
// one input: read_snapshot checks them within a share only). The ids go to
// ranks by value (MPI_Alltoallv); no rank holds more than about its share.
void require_unique_ids(Communicator const& comm, Kokkos::View<ParticleId*, Kokkos::HostSpace> ids,
                        std::string const& what);

} // namespace treetrav::distributed
