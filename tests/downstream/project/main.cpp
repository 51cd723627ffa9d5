// Uses the installed treetrav: generate, write, read back.
#include <treetrav/generators/generators.hpp>
#include <treetrav/io/points.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  Kokkos::ScopeGuard guard(argc, argv);
  auto points = treetrav::generators::uniform(Kokkos::DefaultHostExecutionSpace{}, 100, 3, 7);
  treetrav::io::write_points(argv[1], points);
  auto back = treetrav::io::read_points(argv[1]);
  std::printf("read back %d points in %d dimensions\n", back.size(), back.dimension());
  return back.size() == 100 && back.dimension() == 3 ? 0 : 1;
}
