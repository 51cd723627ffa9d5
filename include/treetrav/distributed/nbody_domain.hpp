#pragma once

// nbody::Domain over MPI ranks (distributed N-body runs).
#include <treetrav/distributed/communicator.hpp>
#include <treetrav/nbody/domain.hpp>

namespace treetrav::distributed {

// nbody::Domain over MPI ranks: collectives of MPI_COMM_WORLD or another
// communicator, and the bodies' moves between ranks.
class NbodyDomain final : public nbody::Domain {
public:
  explicit NbodyDomain(Communicator const& comm) : comm_(comm) {}
  int rank() const override { return comm_.rank(); }
  int ranks() const override { return comm_.size(); }
  std::int64_t min(std::int64_t value) const override;
  std::int64_t sum(std::int64_t value) const override;
  void all_gather(void const* data, std::vector<std::size_t> const& sizes, void* out) const override;
  std::vector<std::size_t> exchange_sizes(std::vector<std::size_t> const& sends) const override;
  void all_to_all(void const* data, std::vector<std::size_t> const& sends, void* out,
                  std::vector<std::size_t> const& receives) const override;
  bool takes_device_memory() const override { return comm_.memory() == MpiMemory::device; }
  nbody::BodyStates partition(nbody::BodyStates held) const override;
  nbody::BodyStates by_rows(nbody::BodyStates local) const override;
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
