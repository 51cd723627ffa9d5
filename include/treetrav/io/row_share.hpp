#pragma once

// Which rows of an input a process reads: one of `parts` contiguous blocks,
// in part order, the first n % parts blocks one row longer. The ranks of a
// distributed run read their inputs so (rank r of P: part r of P), each its
// own block and no more; one process reads part 0 of 1, every row.
#include <cstddef>

namespace treetrav::io {

struct RowBlock {
  std::size_t begin = 0, end = 0;
  std::size_t size() const { return end - begin; }
};

struct RowShare {
  int part = 0, parts = 1;

  // This part's rows of n.
  RowBlock of(std::size_t n) const {
    std::size_t const base = n / std::size_t(parts), extra = n % std::size_t(parts), r = std::size_t(part);
    std::size_t const begin = r * base + (r < extra ? r : extra);
    return {begin, begin + base + (r < extra ? 1 : 0)};
  }
};

}  // namespace treetrav::io
