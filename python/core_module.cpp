// discount_app._core: the compiled half of the Python package. It converts
// arguments, runs the job on a worker thread with the GIL released, and
// meanwhile, on the calling thread, hands the progress figures to the
// caller's callable and watches for Ctrl-C (KeyboardInterrupt), which asks
// the job to stop after the slabs in flight. Errors come back as
// (exit code, message) for the wrapper (discount_app/__init__.py) to raise
// as discount_app.Error subclasses.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <Python.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <new>
#include <optional>
#include <thread>

#include "commands/commands.hpp"
#include "common/error.hpp"
#include "config/config.hpp"
#include "embed/embed.hpp"
#include "embed/engine_thread.hpp"
#include "embed/pinned_arrays.hpp"

namespace py = pybind11;
using namespace discount;

namespace {

// One job at a time in this process (the wrapper serialises its callers
// with a lock; this refuses anyone who bypasses it).
std::mutex g_job_mutex;

struct Outcome {
  int code = 0;           // 0: done; else the CLI's exit code
  std::string message;    // the CLI's error line, without "error: "
  std::string report;     // JSON
  bool keyboard = false;  // a KeyboardInterrupt asked the job to stop
};

// Runs work(progress) on a worker thread; see the file comment.
template <class Work>
Outcome run_in_worker(Work work, const py::object& progress) {
  std::unique_lock<std::mutex> job_lock(g_job_mutex, std::try_to_lock);
  if (!job_lock.owns_lock())
    return {static_cast<int>(ExitCode::usage),
            "another discount_app call is running in this process; calls are serialised (use one thread, "
            "or let the module's lock order them)", "", false};
  std::atomic<int> stop{0};
  std::mutex m;
  std::condition_variable cv;
  std::deque<ProgressFields> queue;
  bool done = false;
  std::uint64_t pushed = 0, handled = 0;  // progress figures queued, and passed to the callable
  Outcome outcome;
  const bool want_progress = !progress.is_none();
  embed::Progress on_progress;
  // The job waits until the callable has seen each figure, so what the
  // callable does (raise KeyboardInterrupt, say) takes effect before the
  // next slab starts, however fast the slabs are.
  if (want_progress)
    on_progress = [&](const ProgressFields& fields) {
      std::unique_lock<std::mutex> lock(m);
      queue.push_back(fields);
      const std::uint64_t mine = ++pushed;
      cv.notify_all();
      cv.wait(lock, [&] { return handled >= mine; });
    };
  // This thread only waits for the engine thread, where every Kokkos call of
  // the process runs (embed/engine_thread.hpp); the calling thread meanwhile
  // passes progress on and watches for Ctrl-C, the GIL released.
  std::thread worker([&] { embed::run_on_engine_thread([&] {
    try {
      outcome.report = work(&stop, on_progress);
    } catch (const Error& e) {
      outcome.code = static_cast<int>(e.code());
      outcome.message = e.what();
    } catch (const std::bad_alloc&) {
      outcome.code = static_cast<int>(ExitCode::internal);
      outcome.message = "out of host memory; lower host_budget";
    } catch (const std::exception& e) {
      outcome.code = static_cast<int>(ExitCode::internal);
      outcome.message = std::string("internal error: ") + e.what() + " (please report)";
    } catch (...) {
      outcome.code = static_cast<int>(ExitCode::internal);
      outcome.message = "internal error: an unknown exception (please report)";
    }
    std::lock_guard<std::mutex> lock(m);
    done = true;
    cv.notify_all();
  }); });
  std::optional<py::error_already_set> raised;  // by the callable, or a KeyboardInterrupt
  for (;;) {
    std::deque<ProgressFields> items;
    bool finished = false;
    {
      py::gil_scoped_release release;
      std::unique_lock<std::mutex> lock(m);
      cv.wait_for(lock, std::chrono::milliseconds(20), [&] { return done || !queue.empty(); });
      items.swap(queue);
      finished = done;
    }
    for (const auto& f : items) {
      if (raised) break;
      try {
        py::dict d;
        d["written"] = f.written;
        d["total"] = f.total;
        d["gb_out"] = f.gb_out;
        d["gb_per_s"] = f.gb_per_s;
        d["eta_seconds"] = f.eta_seconds;
        progress(d);
      } catch (py::error_already_set& e) {
        raised.emplace(std::move(e));
        stop = SIGINT;
      }
    }
    if (!items.empty()) {
      std::lock_guard<std::mutex> lock(m);
      handled += items.size();
      cv.notify_all();
    }
    if (!raised && PyErr_CheckSignals() != 0) {  // Ctrl-C: Python's handler raised KeyboardInterrupt
      raised.emplace();
      stop = SIGINT;
    }
    if (finished) break;
  }
  {
    py::gil_scoped_release release;
    worker.join();
  }
  if (raised) {
    if (raised->matches(PyExc_KeyboardInterrupt)) {
      outcome.keyboard = true;
      if (outcome.code == 0) throw *raised;  // the job finished first: the interrupt stands
    } else {
      throw *raised;  // the progress callable's own exception
    }
  }
  return outcome;
}

py::tuple as_tuple(const Outcome& o) { return py::make_tuple(o.code, o.message, o.report, o.keyboard); }

ArrayRef array_ref(const py::tuple& desc, const char* name) {
  // (address, is_float32, shape, strides in elements[, pinned in place by the package])
  ArrayRef a;
  a.pinned = desc.size() > 4 && desc[4].cast<bool>();
  a.name = name;
  a.data = reinterpret_cast<void*>(desc[0].cast<std::uintptr_t>());
  a.type = desc[1].cast<bool>() ? ElementType::f32 : ElementType::f64;
  const auto shape = desc[2].cast<std::vector<std::int64_t>>();
  const auto strides = desc[3].cast<std::vector<std::int64_t>>();
  a.rank = static_cast<int>(shape.size());
  for (std::size_t j = 0; j < shape.size(); ++j) {
    a.shape[j] = shape[j];
    a.strides[j] = strides[j];
  }
  return a;
}

Axis axis_of(const std::string& name, const char* what) {
  if (name == "date") return Axis::date;
  if (name == "id") return Axis::id;
  if (name == "num") return Axis::num;
  throw Error(ExitCode::usage, std::string(what) + ": unknown axis '" + name + "' (use date, id, num)");
}

std::optional<MemorySize> memory_size(const std::optional<std::string>& text, const char* what) {
  if (!text) return std::nullopt;
  try {
    return parse_memory_size(*text);
  } catch (const std::invalid_argument& e) {
    throw Error(ExitCode::usage, std::string(what) + " = '" + *text + "': " + e.what() +
                                     " (give bytes such as '512MiB', '16GiB' or a percentage such as '80%')");
  }
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "discount_app's compiled engine (use the discount_app package, not this module)";

  m.def("run_config", [](const std::string& text, const std::string& source, bool is_path, py::object progress) {
    return as_tuple(run_in_worker(
        [&](const std::atomic<int>* stop, const embed::Progress& on_progress) {
          const Config config = is_path ? load_config(text) : parse_config(text, source);
          const RunReport report = embed::run_job(config, stop, on_progress);
          // The output was complete for this job already: nothing ran, nothing to report but that.
          if (report.outcome == "already complete" && report.slabs_total == 0)
            return std::string(R"({"outcome": "already complete"})");
          return report.to_json();
        },
        progress));
  });

  m.def("multiply", [](py::tuple mult, py::tuple disc, py::tuple out, bool device_arrays, std::vector<std::string> axes,
                       std::string space, std::optional<std::string> device_budget,
                       std::optional<std::string> host_budget, std::vector<std::string> parallel_dims,
                       std::optional<std::string> chunk_axis, py::object progress) {
    embed::MultiplyRequest request;
    request.mult = array_ref(mult, "mult");
    request.disc = array_ref(disc, "disc");
    request.out = array_ref(out, "out");
    request.device_arrays = device_arrays;
    return as_tuple(run_in_worker(
        [&](const std::atomic<int>* stop, const embed::Progress& on_progress) {
          for (std::size_t j = 0; j < 3; ++j) request.axes[j] = axis_of(axes.at(j), "axes");
          if (space != "device" && space != "host")
            throw Error(ExitCode::usage, "space = '" + space + "': use 'device' or 'host'");
          request.space = space == "host" ? Space::host : Space::device;
          request.device_budget = memory_size(device_budget, "device_budget");
          request.host_budget = memory_size(host_budget, "host_budget");
          request.parallel_dims.clear();
          for (const auto& d : parallel_dims) request.parallel_dims.push_back(axis_of(d, "parallel_dims"));
          if (chunk_axis && *chunk_axis != "auto") request.chunk_axis = axis_of(*chunk_axis, "chunk_axis");
          return embed::multiply(request, stop, on_progress).to_json();
        },
        progress));
  });

  m.def("finalize", [] {
    py::gil_scoped_release release;
    embed::run_on_engine_thread([] { embed::finalize_kokkos(); });
  });
  m.def("kokkos_started", [] { return embed::kokkos_started(); });
  m.def("release_buffers", [] {
    py::gil_scoped_release release;
    std::uint64_t bytes = 0;
    embed::run_on_engine_thread([&] { bytes = embed::release_buffers(); });
    return bytes;
  });
  m.def("kept_buffer_bytes", [] { return embed::kept_buffer_bytes(); });
  // Arrays pinned in place (embed/pinned_arrays.hpp): pinned on the engine
  // thread, after Kokkos and the GPU context are up; unpinned from any thread
  // (a weakref callback as an array is freed).
  m.def("pin", [](std::uintptr_t address, std::size_t bytes) {
    py::gil_scoped_release release;
    bool pinned = false;
    embed::run_on_engine_thread([&] {
      try {
        embed::ensure_kokkos();
        pinned = embed::pin_array(reinterpret_cast<void*>(address), bytes);
      } catch (const std::exception&) {
        pinned = false;  // the arrays go through staging, as unpinned ones do
      }
    });
    return pinned;
  });
  m.def("unpin", [](std::uintptr_t address) {
    py::gil_scoped_release release;
    return embed::unpin_array(reinterpret_cast<void*>(address));
  });
  m.def("pinned_bytes", [] { return embed::pinned_array_bytes(); });
  m.def("device_memory_is_separate", [] {
    py::gil_scoped_release release;
    bool separate = false;
    std::string failure;
    embed::run_on_engine_thread([&] {
      try {
        embed::ensure_kokkos();
        separate = embed::device_memory_is_separate();
      } catch (const std::exception& e) {
        failure = e.what();
      }
    });
    if (!failure.empty()) throw std::runtime_error(failure);
    return separate;
  });
  m.def("version_text", [] { return version_text(); });
}
