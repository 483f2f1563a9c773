// kvlab._harness: the load harness's sweep runner (harness/sweep.h) as a
// Python module, so an analysis can run one sweep in-process and get the
// points back as Python objects. It is the notebook's way to measure
// (kvlab.running.inprocess starts a server for it and makes DataFrames of what it
// returns; notebooks/analysis.ipynb, tests/python/test_bindings.py); the
// runner (`python3 -m kvlab run`) measures with kvlab-load processes instead.
//
//   from kvlab import _harness
//   outcome = _harness.run_sweep("tcp://127.0.0.1:6379", client="pooled",
//                                threads=[1, 2], command="incrby", keys=1,
//                                duration=0.5, warmup=0.1, repetitions=3)
//   outcome.ok, outcome.message, outcome.points[0].repetitions[0].ops_per_s
//
// The GIL is released while the harness runs; the optional `on_repetition`
// callback re-acquires it (it runs on the calling thread, between windows).
// Invalid arguments raise ValueError naming what is allowed; a sweep that
// fails part-way returns ok=False with its message and the completed points.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "harness/clients/client_strategy.h"
#include "harness/measurement/latency_histogram.h"
#include "harness/measurement/process_readings.h"
#include "harness/sweep.h"
#include "harness/clients/target.h"
#include "harness/workloads/workload.h"

namespace py = pybind11;
using namespace kvlab::harness;

namespace {

// What run_sweep returns: the harness's Status and every point it started.
struct SweepOutcome {
  bool ok = true;
  std::string message;
  std::vector<PointResult> points;
};

void ThrowIfInvalid(const Status& status) {
  if (!status.ok()) throw py::value_error(status.message());
}

LoadConfig MakeConfig(const std::string& target, const std::string& client,
                      const std::vector<int>& threads, int connections, int pipeline,
                      const std::string& command, const std::string& ratio, uint64_t keys,
                      const std::string& key_dist, const std::string& value_size, double duration,
                      double warmup, int repetitions, double rate, bool nodelay,
                      const std::vector<int>& cpus, bool prefill) {
  LoadConfig config;
  ThrowIfInvalid(ParseTarget(target, &config.target));
  ThrowIfInvalid(ParseClientKind(client, &config.client));
  ThrowIfInvalid(ParseCommand(command, &config.workload));
  ThrowIfInvalid(ParseRatio(ratio, &config.workload));
  ThrowIfInvalid(ParseKeyDistribution(key_dist, &config.workload));
  ThrowIfInvalid(ParseValueSize(value_size, &config.workload));
  config.threads = threads;
  config.connections = connections;
  config.pipeline = pipeline;
  config.workload.keys = keys;
  config.duration_s = duration;
  config.warmup_s = warmup;
  config.repetitions = repetitions;
  config.rate = rate;
  config.tcp_nodelay = nodelay;
  config.cpus = cpus;
  config.prefill = prefill;
  ThrowIfInvalid(ValidateConfig(config));
  return config;
}

SweepOutcome RunSweepReleasingGil(const LoadConfig& config, py::object on_repetition) {
  SweepCallbacks callbacks;
  if (!on_repetition.is_none()) {
    callbacks.on_repetition = [&on_repetition](const PointResult& point,
                                               const RepetitionResult& repetition) {
      py::gil_scoped_acquire gil;
      on_repetition(point.threads, repetition);
    };
  }
  SweepOutcome outcome;
  Status status;
  {
    py::gil_scoped_release no_gil;
    status = RunSweep(config, callbacks, &outcome.points);
  }
  outcome.ok = status.ok();
  outcome.message = status.message();
  return outcome;
}

}  // namespace

PYBIND11_MODULE(_harness, module) {
  module.doc() =
      "kvlab's load harness (harness/sweep.h): run one sweep in-process "
      "(the notebook's API; see kvlab.running.inprocess)";

  py::class_<RepetitionResult>(module, "RepetitionResult")
      .def_readonly("repetition", &RepetitionResult::repetition)
      .def_readonly("ops", &RepetitionResult::ops)
      .def_readonly("errors", &RepetitionResult::errors)
      .def_readonly("wrong_type", &RepetitionResult::wrong_type)
      .def_readonly("misses", &RepetitionResult::misses)
      .def_readonly("seconds", &RepetitionResult::seconds)
      .def_readonly("ops_per_s", &RepetitionResult::ops_per_s)
      .def_readonly("p50_us", &RepetitionResult::p50_us)
      .def_readonly("p90_us", &RepetitionResult::p90_us)
      .def_readonly("p99_us", &RepetitionResult::p99_us)
      .def_readonly("p999_us", &RepetitionResult::p999_us)
      .def_readonly("max_us", &RepetitionResult::max_us)
      .def_readonly("mean_us", &RepetitionResult::mean_us)
      .def_readonly("client_cpu", &RepetitionResult::client_cpu)
      .def_readonly("usable_cores", &RepetitionResult::usable_cores)
      .def_readonly("client_bound", &RepetitionResult::client_bound)
      .def_readonly("server_cpu", &RepetitionResult::server_cpu)
      .def(
          "latency_us_at",
          [](const RepetitionResult& r, double quantile) {
            if (quantile < 0 || quantile > 1) throw py::value_error("quantile must be in [0, 1]");
            return r.latency.ValueAtQuantile(quantile) / 1000.0;
          },
          py::arg("quantile"), "latency (µs) at a quantile in [0, 1], from the histogram")
      .def_property_readonly("latency_count",
                             [](const RepetitionResult& r) { return r.latency.count(); })
      .def("__repr__", [](const RepetitionResult& r) {
        return "<RepetitionResult " + std::to_string(r.repetition) + ": " +
               std::to_string(static_cast<long long>(r.ops_per_s)) + " ops/s>";
      });

  py::class_<PointResult>(module, "PointResult")
      .def_readonly("point_index", &PointResult::point_index)
      .def_readonly("threads", &PointResult::threads)
      .def_property_readonly("client",
                             [](const PointResult& p) { return ClientKindName(p.client); })
      .def_readonly("connections", &PointResult::connections)
      .def_readonly("pipeline", &PointResult::pipeline)
      .def_readonly("repetitions", &PointResult::repetitions)
      .def_readonly("incrby_sum", &PointResult::incrby_sum)
      .def_readonly("complete", &PointResult::complete);

  py::class_<SweepOutcome>(module, "SweepOutcome")
      .def_readonly("ok", &SweepOutcome::ok)
      .def_readonly("message", &SweepOutcome::message)
      .def_readonly("points", &SweepOutcome::points);

  module.def(
      "run_sweep",
      [](const std::string& target, const std::string& client, const std::vector<int>& threads,
         int connections, int pipeline, const std::string& command, const std::string& ratio,
         uint64_t keys, const std::string& key_dist, const std::string& value_size, double duration,
         double warmup, int repetitions, double rate, bool nodelay, const std::vector<int>& cpus,
         bool prefill, py::object on_repetition) {
        LoadConfig config = MakeConfig(target, client, threads, connections, pipeline, command,
                                       ratio, keys, key_dist, value_size, duration, warmup,
                                       repetitions, rate, nodelay, cpus, prefill);
        return RunSweepReleasingGil(config, std::move(on_repetition));
      },
      py::arg("target"), py::kw_only(), py::arg("client") = "dedicated",
      py::arg("threads") = std::vector<int>{1}, py::arg("connections") = 0, py::arg("pipeline") = 1,
      py::arg("command") = "set", py::arg("ratio") = "1:10", py::arg("keys") = 100000,
      py::arg("key_dist") = "uniform", py::arg("value_size") = "64", py::arg("duration") = 1.0,
      py::arg("warmup") = 0.25, py::arg("repetitions") = 3, py::arg("rate") = 0.0,
      py::arg("nodelay") = true, py::arg("cpus") = std::vector<int>{}, py::arg("prefill") = false,
      py::arg("on_repetition") = py::none(),
      "Runs one sweep (one point per value of `threads`) and returns a SweepOutcome. "
      "`on_repetition(threads, repetition)` is called after each measured window.");

  module.def(
      "process_tree", [](const std::vector<pid_t>& roots) { return ProcessTreeOf(roots); },
      py::arg("roots"),
      "The processes `roots` and their live descendants, roots first "
      "(harness/measurement/process_readings.h; kvlab-load --server-pids reads these).");
  module.def("process_tree_cpu_seconds", &ProcessTreeCpuSeconds, py::arg("roots"),
             "CPU seconds used so far by process_tree(roots), threads included; < 0 when "
             "no root can be read: the server CPU kvlab-load --server-pids measures.");
}
