// treetrav._core: the extension module. It owns the process's Kokkos session
// on its engine thread (started at import, ended at exit) and turns the
// library's InputError into ValueError.
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

namespace {

// The engine thread and its queue. Made at import and never destroyed: at
// exit, _finalize ends Kokkos there and stops the thread (trees still alive
// then keep their memory to the process's end).
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

  void stop() {
    post([this] {
      if (Kokkos::is_initialized())
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
  // The package's atexit hook. Results live in the caller's arrays; trees
  // the interpreter still holds keep their memory to the process's end.
  m.def("_finalize", [] {
    if (!engine)
      return;
    Engine* stopping = engine;
    engine = nullptr; // trees dropped from now on leave their memory be
    nb::gil_scoped_release release;
    stopping->stop();
  });
  bind_searches(m);
  bind_gravity(m);
}
