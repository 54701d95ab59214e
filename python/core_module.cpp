// discount_app._core: the compiled half of the Python package. It converts
// arguments, runs the job on a worker thread with the GIL released, and
// meanwhile, on the calling thread, hands the progress figures to the
// caller's callable and watches for Ctrl-C (KeyboardInterrupt), which asks
// the job to stop after the slabs in flight. Errors come back as
// (exit code, message) for the wrapper (discount_app/__init__.py) to raise
// as discount_app.Error subclasses. Configuration from Python (run's dict,
// multiply's keyword arguments) is handed to the job file's parser as a
// tree of nodes, never as YAML text. In a child forked after the engine
// started every call refuses at once (embed/engine_thread.hpp).
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <Python.h>
#include <pthread.h>
#include <signal.h>
#include <yaml-cpp/yaml.h>

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
#include "common/quote.hpp"
#include "config/config.hpp"
#include "config/config_tree.hpp"
#include "config/yaml_guard.hpp"
#include "embed/calling_thread.hpp"
#include "embed/embed.hpp"
#include "embed/engine_thread.hpp"
#include "embed/pinned_arrays.hpp"

namespace py = pybind11;
using namespace discount;

namespace {

// One job at a time in this process (the wrapper serialises its callers
// with a lock; this refuses anyone who bypasses it).
std::mutex g_job_mutex;

// A forked child starts with this lock free: the thread that held it in the
// parent, if any, does not exist there.
void reset_job_lock_in_child() { new (&g_job_mutex) std::mutex(); }

struct Outcome {
  int code = 0;           // 0: done; else the CLI's exit code
  std::string message;    // the CLI's error line, without "error: "
  std::string report;     // JSON
  bool keyboard = false;  // a KeyboardInterrupt asked the job to stop
};

// Runs work(progress) on a worker thread; see the file comment.
// A child forked after the engine started refuses at once (embed/engine_thread.hpp).
std::optional<Outcome> refused_after_fork() {
  if (!embed::engine_lost_to_fork()) return std::nullopt;
  return Outcome{embed::kEngineLostExitCode, embed::engine_lost_message(), "", false};
}

template <class Work>
Outcome run_in_worker(Work work, const py::object& progress) {
  if (auto refused = refused_after_fork()) return *refused;
  std::unique_lock<std::mutex> job_lock(g_job_mutex, std::try_to_lock);
  if (!job_lock.owns_lock())
    return {static_cast<int>(ExitCode::usage),
            "another discount_app call is running in this process; calls are serialised (use one thread, "
            "or let the module's lock order them)",
            "", false};
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
  std::thread worker([&] {
    embed::run_on_engine_thread([&] {
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
    });
  });
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

// A Python value as a YAML node for parse_config_tree: dicts with str keys,
// lists and tuples, str and os.PathLike, int, float, bool and None. Nothing
// is written as YAML text, so no key or value can add configuration; the
// parser then applies the job file's own rules (unknown keys included).
class TreeBuilder {
 public:
  explicit TreeBuilder(std::string source) : source_(std::move(source)) {}

  YAML::Node build(py::handle value, const std::string& where, int depth = 0) {
    // The schema is three mappings and a list deep; a dict that holds itself stops here.
    if (depth > 8) fail(shown(where) + " nests deeper than any configuration key");
    if (++nodes_ > kMaxConfigNodes)
      fail("more than " + std::to_string(kMaxConfigNodes) + " values; a job holds a few dozen keys and values");
    if (value.is_none()) return YAML::Node(YAML::NodeType::Null);
    if (PyBool_Check(value.ptr())) return YAML::Node(value.ptr() == Py_True ? "true" : "false");
    if (PyLong_Check(value.ptr()) || (!PyFloat_Check(value.ptr()) && PyIndex_Check(value.ptr()))) {
      // int(value) as decimal digits: an IntEnum or a NumPy integer as its number
      PyObject* number = PyNumber_Index(value.ptr());
      if (!number) throw py::error_already_set();
      return YAML::Node(py::str(py::reinterpret_steal<py::object>(number)).cast<std::string>());
    }
    if (PyFloat_Check(value.ptr()))
      return YAML::Node(py::repr(py::float_(py::reinterpret_borrow<py::object>(value))).cast<std::string>());
    if (PyUnicode_Check(value.ptr())) return YAML::Node(value.cast<std::string>());
    if (py::hasattr(value, "__fspath__")) {
      py::object path = py::module_::import("os").attr("fspath")(value);
      if (!PyUnicode_Check(path.ptr())) fail(shown(where) + ": a bytes path; give it as str");
      return YAML::Node(path.cast<std::string>());
    }
    if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr())) {
      YAML::Node list(YAML::NodeType::Sequence);
      std::size_t i = 0;
      for (py::handle item : value) list.push_back(build(item, where + "[" + std::to_string(i++) + "]", depth + 1));
      return list;
    }
    if (py::isinstance(value, py::module_::import("collections.abc").attr("Mapping"))) {
      YAML::Node map(YAML::NodeType::Map);
      for (py::handle key : value) {
        const std::string in = where.empty() ? "the top level" : "'" + shown(where) + "'";
        if (!PyUnicode_Check(key.ptr()))
          fail("key " + printable_for_message(py::repr(key).cast<std::string>(), 80) + " in " + in +
               " is not a string; keys are the names docs/config.md lists, such as 'input'");
        const std::string name = key.cast<std::string>();
        map[name] = build(value[key], where.empty() ? name : where + "." + name, depth + 1);
      }
      return map;
    }
    fail(shown(where) + ": a value of type '" + py::str(py::type::of(value).attr("__name__")).cast<std::string>() +
         "' is not a configuration value (give str, int, float, bool, None, a list or a dict)");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw config_error(source_ + ": " + what); }
  // A path of keys not yet checked: control bytes escaped, a long one cut.
  static std::string shown(const std::string& where) { return printable_for_message(where, 120); }

  std::string source_;
  std::size_t nodes_ = 0;
};

// `discount_app run` on a parsed config; the report as JSON.
std::string run_job_json(const Config& config, const std::atomic<int>* stop, const embed::Progress& on_progress) {
  const RunReport report = embed::run_job(config, stop, on_progress);
  // The output was complete for this job already: nothing ran, nothing to report but that.
  if (report.outcome == "already complete" && report.slabs_total == 0)
    return std::string(R"({"outcome": "already complete"})");
  return report.to_json();
}

// One multiply() keyword argument checked by the job file's own rules: its
// key alone in an otherwise minimal job (a synthetic input, a checksum
// output), so a value the YAML refuses is refused with the YAML's message,
// after the argument's name.
Config argument_config(const char* name, const char* section, const char* key, py::handle value) {
  YAML::Node root(YAML::NodeType::Map);
  root["input"]["synthetic"]["dates"] = 1;
  root["input"]["synthetic"]["ids"] = 1;
  root["input"]["synthetic"]["nums"] = 1;
  root["output"]["mode"] = "checksum";
  root[section][key] = TreeBuilder(name).build(value, std::string(section) + "." + key);
  return parse_config_tree(root, name);
}

// multiply()'s keyword arguments, each by its YAML key's rules (on the
// calling thread: they are Python objects). Throws discount::Error.
struct Arguments {
  py::object axes, space, device_budget, host_budget, parallel_dims, chunk_axis;
};

void read_arguments(embed::MultiplyRequest& request, const Arguments& a) {
  request.axes = argument_config("axes", "input", "axes", a.axes).input.axes;
  try {
    request.space = argument_config("space", "compute", "space", a.space).compute.space;
  } catch (const Error& e) {
    throw Error(e.code(), e.what() + std::string("; or 'auto': device arrays on the device, others on the host"));
  }
  if (!a.device_budget.is_none())
    request.device_budget =
        argument_config("device_budget", "memory", "device_budget", a.device_budget).memory.device_budget;
  if (!a.host_budget.is_none())
    request.host_budget = argument_config("host_budget", "memory", "host_budget", a.host_budget).memory.host_budget;
  if (!a.parallel_dims.is_none())
    request.parallel_dims =
        argument_config("parallel_dims", "compute", "parallel_dims", a.parallel_dims).compute.parallel_dims;
  if (!a.chunk_axis.is_none())
    request.chunk_axis = argument_config("chunk_axis", "memory", "chunk_axis", a.chunk_axis).memory.chunk_axis;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "discount_app's compiled engine (use the discount_app package, not this module)";

  // A forked child starts with the job lock free (embed/engine_thread.hpp
  // says why the engine itself refuses there).
  pthread_atfork(nullptr, nullptr, &reset_job_lock_in_child);

  // A YAML job file; its relative paths resolve against its folder.
  m.def("run_file", [](const std::string& path, py::object progress) {
    return as_tuple(run_in_worker(
        [&](const std::atomic<int>* stop, const embed::Progress& on_progress) {
          return run_job_json(load_config(path), stop, on_progress);
        },
        progress));
  });

  // A dict with the YAML's structure, parsed as a tree (no YAML text); relative paths resolve against the
  // current directory.
  m.def("run_tree", [](py::object tree, py::object progress) {
    if (auto refused = refused_after_fork()) return as_tuple(*refused);
    const std::string source = "run(config=dict)";
    std::optional<Config> config;
    try {
      config = parse_config_tree(TreeBuilder(source).build(tree, ""), source);
    } catch (const Error& e) { return as_tuple({static_cast<int>(e.code()), e.what(), "", false}); }
    return as_tuple(
        run_in_worker([&](const std::atomic<int>* stop,
                          const embed::Progress& on_progress) { return run_job_json(*config, stop, on_progress); },
                      progress));
  });

  m.def("multiply", [](py::tuple mult, py::tuple disc, py::tuple out, bool device_arrays, py::object axes,
                       py::object space, py::object device_budget, py::object host_budget, py::object parallel_dims,
                       py::object chunk_axis, py::object progress) {
    if (auto refused = refused_after_fork()) return as_tuple(*refused);
    embed::MultiplyRequest request;
    request.mult = array_ref(mult, "mult");
    request.disc = array_ref(disc, "disc");
    request.out = array_ref(out, "out");
    request.device_arrays = device_arrays;
    try {
      read_arguments(request, {axes, space, device_budget, host_budget, parallel_dims, chunk_axis});
    } catch (const Error& e) { return as_tuple({static_cast<int>(e.code()), e.what(), "", false}); }
    return as_tuple(run_in_worker(
        [&](const std::atomic<int>* stop, const embed::Progress& on_progress) {
          return embed::multiply(request, stop, on_progress).to_json();
        },
        progress));
  });

  // multiply()'s keyword arguments checked as the engine checks them, for the
  // package's calling-thread path (it keeps what passed): (code, message,
  // host budget bytes or None, device budget bytes or None); a budget given
  // as a percentage gives None, as does one not given.
  m.def("check_arguments",
        [](py::object axes, py::object space, py::object device_budget, py::object host_budget,
           py::object parallel_dims, py::object chunk_axis) -> py::tuple {
          embed::MultiplyRequest request;
          try {
            read_arguments(request, {axes, space, device_budget, host_budget, parallel_dims, chunk_axis});
          } catch (const Error& e) {
            return py::make_tuple(static_cast<int>(e.code()), e.what(), py::none(), py::none());
          }
          const auto bytes = [](const std::optional<MemorySize>& size) -> py::object {
            if (!size || size->is_percent) return py::none();
            return py::int_(size->bytes);
          };
          return py::make_tuple(0, std::string(), bytes(request.host_budget), bytes(request.device_budget));
        });

  // A host call on the calling thread (embed/calling_thread.hpp), the GIL
  // released; the package checked the arrays and arguments. Returns seconds.
  m.def("calling_thread_bytes", [] { return embed::kCallingThreadBytes; });
  m.def("multiply_on_calling_thread", [](py::tuple mult, py::tuple disc, py::tuple out, py::sequence axes) {
    const ArrayRef m_ref = array_ref(mult, "mult"), d_ref = array_ref(disc, "disc"), o_ref = array_ref(out, "out");
    std::array<Axis, 3> order{};
    for (std::size_t j = 0; j < 3; ++j) {
      const auto name = axes[j].cast<std::string>();
      order[j] = name == "date" ? Axis::date : name == "id" ? Axis::id : Axis::num;
    }
    py::gil_scoped_release release;
    return embed::multiply_on_calling_thread(m_ref, d_ref, o_ref, order);
  });

  // In a child forked after the engine started (embed/engine_thread.hpp):
  // `engine_lost` gives (exit code, message) for the wrapper to raise before
  // any call; finalize (atexit) and unpin (a weakref callback) do nothing
  // there, and the byte counts are 0, the parent's buffers being of no use.
  m.def("engine_lost", []() -> py::object {
    if (auto refused = refused_after_fork()) return py::make_tuple(refused->code, refused->message);
    return py::none();
  });
  m.def("finalize", [] {
    if (embed::engine_lost_to_fork()) return;
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
  m.def("kept_buffer_bytes", [] { return embed::engine_lost_to_fork() ? 0 : embed::kept_buffer_bytes(); });
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
  m.def("unpin", [](std::uintptr_t address) -> std::uint64_t {
    if (embed::engine_lost_to_fork()) return 0;
    py::gil_scoped_release release;
    return embed::unpin_array(reinterpret_cast<void*>(address));
  });
  m.def("pinned_bytes", [] { return embed::engine_lost_to_fork() ? 0 : embed::pinned_array_bytes(); });
  m.def("device_memory_is_separate", [] {
    py::gil_scoped_release release;
    bool separate = false;
    std::string failure;
    embed::run_on_engine_thread([&] {
      try {
        embed::ensure_kokkos();
        separate = embed::device_memory_is_separate();
      } catch (const std::exception& e) { failure = e.what(); }
    });
    if (!failure.empty()) throw std::runtime_error(failure);
    return separate;
  });
  m.def("version_text", [] { return version_text(); });
}
