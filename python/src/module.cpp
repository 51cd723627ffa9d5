// treetrav._core: the extension module. It owns the process's Kokkos session
// on its engine thread (started at import, ended at exit when no engine array
// is left alive) and turns the library's InputError into ValueError.
#include "module.hpp"

#include <treetrav/core/backends.hpp>
#include <treetrav/version.hpp>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace treetrav::python {

std::atomic<long>& live_engine_objects() {
  static std::atomic<long> count{0};
  return count;
}

namespace {

// The engine thread and its queue. Made at import and never destroyed: at
// exit, _finalize stops the thread (Kokkos ended there first when it may).
class Engine {
public:
  Engine() {
    std::promise<void> started;
    auto ready = started.get_future();
    thread_ = std::thread([this, &started] { run(started); });
    ready.get(); // rethrows a failed Kokkos::initialize
  }

  void post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    wake_.notify_one();
  }

  void stop(bool finalize) {
    post([this, finalize] {
      if (finalize && Kokkos::is_initialized())
        Kokkos::finalize();
      stopping_ = true;
    });
    thread_.join();
  }

  std::atomic<bool> cancelled{false};

private:
  void run(std::promise<void>& started) {
    try {
      // Threads: OMP_NUM_THREADS or every core, as Kokkos decides; no
      // binding forced on the interpreter; no warnings about binding.
#if KOKKOS_VERSION >= 40000
      Kokkos::InitializationSettings settings;
      settings.set_disable_warnings(true);
      Kokkos::initialize(settings);
#else
      Kokkos::InitArguments arguments;
      arguments.disable_warnings = true;
      Kokkos::initialize(arguments);
#endif
      started.set_value();
    } catch (...) {
      started.set_exception(std::current_exception());
      return;
    }
    while (!stopping_) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return !tasks_.empty(); });
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task(); // a packaged_task: exceptions go to its caller
    }
  }

  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false; // the engine thread's own
};

Engine* engine = nullptr;

} // namespace

void post_to_engine(std::function<void()> task) {
  if (!engine)
    throw std::runtime_error("treetrav: the engine has stopped (the interpreter is exiting)");
  engine->post(std::move(task));
}
bool engine_cancelled() { return engine->cancelled.load(); }
void set_engine_cancelled(bool cancelled) { engine->cancelled = cancelled; }

} // namespace treetrav::python

NB_MODULE(_core, m) {
  namespace nb = nanobind;
  using namespace treetrav;
  using namespace treetrav::python;
  m.doc() = "treetrav's engine: tree searches and Barnes-Hut on Kokkos backends";
  nb::register_exception_translator([](std::exception_ptr const& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (InputError const& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  // Instances alive at exit are the interpreter's to drop, not leaks to report.
  nb::set_leak_warnings(false);
  engine = new Engine();
  m.attr("__version__") = TREETRAV_VERSION_STRING;
  m.def("backends", [] {
    std::vector<std::string> names;
    for (Backend b : enabled_backends())
      names.push_back(to_string(b));
    return names;
  });
  m.def("default_backend", [] { return to_string(default_backend()); });
  // The package's atexit hook. Kokkos may end only when no View is left:
  // arrays the interpreter still holds at exit keep it running (the process
  // ends anyway).
  m.def("_finalize", [] {
    if (!engine)
      return;
    nb::gil_scoped_release release;
    engine->stop(live_engine_objects() == 0);
    engine = nullptr;
  });
  bind_searches(m);
  bind_gravity(m);
}
