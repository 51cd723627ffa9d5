#pragma once

// The operations treefix combines with. Rootfix and leaffix accept any
// commutative group, described by a small stateless (or trivially copyable)
// object usable on the device:
//
//   using value_type       = ...;  // weights and results
//   using accumulator_type = ...;  // what partial results are carried in
//   accumulator_type identity() const;
//   accumulator_type combine(accumulator_type, accumulator_type) const;
//   accumulator_type inverse(accumulator_type) const;  // combine(a, inverse(a)) == identity()
//   accumulator_type lift(value_type) const;            // a weight as a partial result
//   value_type lower(accumulator_type) const;           // a partial result as a result
//
// The vectorial (Euler tour) method needs the inverse: it adds a weight where
// a vertex's subtree opens and its inverse where it closes. With floating point
// the cancellation is inexact; CompensatedSum and WidenedSum carry partial
// sums in more precision than the weights to take that error back out.
#include <treetrav/core/config.hpp>
#include <treetrav/core/fixed_vector.hpp>

#include <type_traits>

namespace treetrav {

namespace detail {

// The common case: partial results are plain values.
template <class T>
struct ExactAccumulation {
  using value_type = T;
  using accumulator_type = T;
  KOKKOS_FUNCTION T lift(T value) const { return value; }
  KOKKOS_FUNCTION T lower(T value) const { return value; }
};

} // namespace detail

// Addition. Exact for integers (as long as no prefix overflows: the vectorial
// leaffix's prefixes reach the total weight); rounded for floating point.
template <class T>
struct Sum : detail::ExactAccumulation<T> {
  static_assert(std::is_arithmetic_v<T>, "Sum needs an arithmetic type");
  KOKKOS_FUNCTION T identity() const { return T(0); }
  KOKKOS_FUNCTION T combine(T a, T b) const { return a + b; }
  KOKKOS_FUNCTION T inverse(T a) const { return -a; }
};

// Bitwise exclusive or: every value is its own inverse.
template <class T>
struct BitwiseXor : detail::ExactAccumulation<T> {
  static_assert(std::is_integral_v<T>, "BitwiseXor needs an integral type");
  KOKKOS_FUNCTION T identity() const { return T(0); }
  KOKKOS_FUNCTION T combine(T a, T b) const { return a ^ b; }
  KOKKOS_FUNCTION T inverse(T a) const { return a; }
};

// Componentwise addition of N-vectors: e.g. (m, m x, m y, m z), whose leaffix
// gives every subtree's mass and centre of mass. Exact for integers, rounded
// componentwise for floating point.
template <class T, int N>
struct VectorSum {
  static_assert(std::is_arithmetic_v<T> && N > 0, "VectorSum adds vectors of numbers");
  using value_type = FixedVector<T, N>;
  using accumulator_type = FixedVector<T, N>;
  KOKKOS_FUNCTION value_type identity() const {
    value_type zero{};
    for (int i = 0; i < N; ++i)
      zero[i] = T(0);
    return zero;
  }
  KOKKOS_FUNCTION value_type combine(value_type const& a, value_type const& b) const {
    value_type sum{};
    for (int i = 0; i < N; ++i)
      sum[i] = a[i] + b[i];
    return sum;
  }
  KOKKOS_FUNCTION value_type inverse(value_type const& a) const {
    value_type negated{};
    for (int i = 0; i < N; ++i)
      negated[i] = -a[i];
    return negated;
  }
  KOKKOS_FUNCTION value_type lift(value_type const& value) const { return value; }
  KOKKOS_FUNCTION value_type lower(value_type const& value) const { return value; }
};

// Addition of Value weights accumulated in a wider type (float weights, double
// partial sums): the simplest way to make the vectorial method's extra
// cancellations harmless, at the price of wider scan traffic.
template <class Value, class Wide>
struct WidenedSum {
  static_assert(std::is_floating_point_v<Value> && std::is_floating_point_v<Wide> &&
                    sizeof(Wide) > sizeof(Value),
                "WidenedSum accumulates floating-point values in a wider floating-point type");
  using value_type = Value;
  using accumulator_type = Wide;
  KOKKOS_FUNCTION Wide identity() const { return Wide(0); }
  KOKKOS_FUNCTION Wide combine(Wide a, Wide b) const { return a + b; }
  KOKKOS_FUNCTION Wide inverse(Wide a) const { return -a; }
  KOKKOS_FUNCTION Wide lift(Value value) const { return value; }
  KOKKOS_FUNCTION Value lower(Wide sum) const { return static_cast<Value>(sum); }
};

// An unevaluated sum head + tail with |tail| <= ulp(head) / 2: about twice the
// precision of T ("float-float", "double-double").
template <class T>
struct Compensated {
  T head;
  T tail;
};

namespace detail {

// Knuth's TwoSum: head + tail == a + b exactly, head = fl(a + b).
template <class T>
KOKKOS_FUNCTION Compensated<T> two_sum(T a, T b) {
  T const head = a + b;
  T const b_virtual = head - a;
  T const a_virtual = head - b_virtual;
  return {head, (a - a_virtual) + (b - b_virtual)};
}

// Dekker's FastTwoSum, exact when |a| >= |b| (or a == 0).
template <class T>
KOKKOS_FUNCTION Compensated<T> fast_two_sum(T a, T b) {
  T const head = a + b;
  return {head, b - (head - a)};
}

} // namespace detail

// Addition carried in Compensated<T> pairs: the accurate double-word sum
// (Joldes, Muller and Popescu 2017, "AccurateDWPlusDW"), relative error below
// 3 u^2 for each combination even when the operands cancel. Keeps the float
// vectorial method as accurate as a double computation on float data.
template <class T>
struct CompensatedSum {
  static_assert(std::is_floating_point_v<T>, "CompensatedSum needs a floating-point type");
  using value_type = T;
  using accumulator_type = Compensated<T>;
  KOKKOS_FUNCTION Compensated<T> identity() const { return {T(0), T(0)}; }
  KOKKOS_FUNCTION Compensated<T> combine(Compensated<T> a, Compensated<T> b) const {
    auto const heads = detail::two_sum(a.head, b.head);
    auto const tails = detail::two_sum(a.tail, b.tail);
    auto const first = detail::fast_two_sum(heads.head, heads.tail + tails.head);
    return detail::fast_two_sum(first.head, first.tail + tails.tail);
  }
  KOKKOS_FUNCTION Compensated<T> inverse(Compensated<T> a) const { return {-a.head, -a.tail}; }
  KOKKOS_FUNCTION Compensated<T> lift(T value) const { return {value, T(0)}; }
  KOKKOS_FUNCTION T lower(Compensated<T> sum) const { return sum.head + sum.tail; }
};

} // namespace treetrav
