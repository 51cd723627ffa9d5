#pragma once

// What the module's units share: the array conversions, the engine thread
// and each unit's bindings.
#include "arrays.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <future>
#include <optional>
#include <stdexcept>

namespace treetrav::python {

// All Kokkos work runs on one thread of the module's, the engine thread: it
// initialised Kokkos, so its OpenMP pool is that thread's (Kokkos' host
// backends take work only from the thread that owns them), and calls from
// several Python threads take turns there. Callers wait with the GIL
// released.
void post_to_engine(std::function<void()> task);
// Set while the waiting caller has seen Ctrl-C: the task stops at its next
// pass (in_passes) by throwing Cancelled.
bool engine_cancelled();
void set_engine_cancelled(bool cancelled);

struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("cancelled") {}
};

// Runs f() on the engine thread and returns its value (or rethrows what it
// threw). f must not touch Python objects. Waiting, the caller checks for
// signals: on Ctrl-C the task is cancelled at its next pass and the
// KeyboardInterrupt raised here once it has stopped.
template <class F>
auto on_engine(F&& f) -> decltype(f()) {
  using Result = decltype(f());
  // Shared with the engine thread: it may still be inside the task's call
  // (after the result is set) when this caller has returned.
  auto task = std::make_shared<std::packaged_task<Result()>>(std::forward<F>(f));
  auto done = task->get_future();
  std::optional<nb::python_error> interrupt;
  {
    nb::gil_scoped_release release;
    post_to_engine([task] { (*task)(); });
    while (done.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
      if (interrupt)
        continue;
      nb::gil_scoped_acquire acquire;
      if (PyErr_CheckSignals() != 0) {
        interrupt.emplace(); // takes the pending exception (KeyboardInterrupt)
        set_engine_cancelled(true);
      }
    }
  }
  set_engine_cancelled(false);
  if (interrupt)
    throw *interrupt;
  return done.get();
}

void bind_searches(nb::module_& m);
void bind_gravity(nb::module_& m);

} // namespace treetrav::python
