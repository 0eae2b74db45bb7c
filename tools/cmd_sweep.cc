// `specsim sweep`: the run flags, where the numeric ones take lists and ranges; evaluates the
// cartesian grid on all cores and writes CSV, JSON and a gnuplot plot.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <thread>

#include "cli_common.h"
#include "commands.h"
#include "scenario/flag_ranges.h"
#include "sweep/sweep_plot.h"
#include "sweep/range.h"
#include "sweep/sweep_memory.h"
#include "sweep/sweep_output.h"
#include "util/error.h"
#include "util/json_io.h"
#include "util/output_files.h"

namespace specsim::cli {

namespace {

using namespace specsim::sweep;

// The flags that take lists: their add_run_flags options are replaced by string ones.
struct ListFlags {
  std::string tp, dtype, batch, context, graph_bs, topk, steps, draft_tokens, accept_len, accept_rate;
  std::vector<std::string> allreduce;
};

void replace(CLI::App& app, const std::string& name, std::string& target, const std::string& help) {
  app.remove_option(app.get_option(name));
  app.add_option(name, target, help);
}

void add_list_flags(CLI::App& app, ListFlags& f) {
  replace(app, "--tp-size", f.tp, "tensor-parallel sizes (list or range, e.g. 4,8)");
  replace(app, "--dtype", f.dtype, "target weight dtypes (comma list: bf16,fp8)");
  replace(app, "--batch-size", f.batch, "running requests (list or range, e.g. 1,4,16)");
  replace(app, "--context-len", f.context, "KV-cache tokens per request (list or range)");
  replace(app, "--cuda-graph-max-bs", f.graph_bs, "largest CUDA-graph batch (list or range)");
  replace(app, "--speculative-eagle-topk", f.topk, "draft branches per step (list or range)");
  replace(app, "--speculative-num-steps", f.steps, "draft steps per cycle (list or range)");
  replace(app, "--speculative-num-draft-tokens", f.draft_tokens,
          "tokens verified per cycle (list or range, e.g. 2..8)");
  replace(app, "--accept-len", f.accept_len, "accept lens (list or range with a step, e.g. 1.5..3:0.5)");
  replace(app, "--accept-rate", f.accept_rate, "per-token acceptance rates (list or range with a step)");
  app.remove_option(app.get_option("--allreduce"));
  app.add_option("--allreduce", f.allreduce,
                 "nccl | custom[:VARIANT] | fixed:US where US may be a list or range (fixed:10..200:10); repeatable");
}

Grid make_grid(const ListFlags& f) {
  Grid g;
  auto ints = [](const std::string& text, const FlagRange& r) {
    return text.empty() ? std::vector<long long>{} : parse_int_values(text, std::string(r.flag), r.lo, r.hi);
  };
  namespace fr = flag_ranges;
  g.tp = ints(f.tp, fr::kTpSize);
  g.batch = ints(f.batch, fr::kBatchSize);
  g.context = ints(f.context, fr::kContextLen);
  g.graph_bs = ints(f.graph_bs, fr::kCudaGraphMaxBs);
  g.topk = ints(f.topk, fr::kTopk);
  g.steps = ints(f.steps, fr::kNumSteps);
  g.draft_tokens = ints(f.draft_tokens, fr::kDraftTokens);
  if (!f.dtype.empty()) g.dtype = parse_word_values(f.dtype, "--dtype");
  for (const auto& d : g.dtype) parse_dtype(d, "--dtype");
  if (!f.accept_len.empty()) g.accept_len = parse_double_values(f.accept_len, "--accept-len");
  if (!f.accept_rate.empty()) g.accept_rate = parse_double_values(f.accept_rate, "--accept-rate");
  g.allreduce = parse_allreduce_values(f.allreduce, "--allreduce");
  // No --allreduce: NCCL and the custom kernel side by side, as `specsim run` shows them.
  if (g.allreduce.empty()) g.allreduce = {parse_allreduce("nccl"), parse_allreduce("custom")};
  return g;
}

// A one-line bar on stderr, redrawn every 100 ms until `done` reaches `total`.
class ProgressBar {
 public:
  ProgressBar(std::atomic<size_t>& done, size_t total) : done_(done), total_(total) {
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        draw();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      draw();
      std::fputc('\n', stderr);
    });
  }
  ~ProgressBar() {
    stop_.store(true);
    thread_.join();
  }

 private:
  void draw() const {
    const size_t d = std::min(done_.load(), total_);
    const int width = 40, filled = int(double(d) / double(std::max<size_t>(total_, 1)) * width);
    fmt::print(stderr, "\r[{:#<{}}{:<{}}] {:3.0f}% {}/{}", "", filled, "", width - filled,
               100.0 * double(d) / double(std::max<size_t>(total_, 1)), d, total_);
    std::fflush(stderr);
  }
  std::atomic<size_t>& done_;
  size_t total_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

int cmd_sweep(int argc, char** argv) {
  CLI::App app{"specsim sweep: the run flags over a grid of values (lists A,B,C and ranges A..B[:STEP])"};
  app.name("specsim sweep");
  RunArgs args;
  ListFlags lists;
  std::string csv_path, json_path, plot_path, plot_script, plot_kind = "auto";
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  add_run_flags(app, args);
  add_list_flags(app, lists);
  app.add_option("-o,--output", csv_path, "CSV file (default: stdout, unless --json or --plot is given; - for stdout)");
  app.add_option("--json", json_path, "also write the points as JSON to this file");
  app.add_option("--threads", threads, "worker threads (default: all cores)")->check(CLI::Range(1, 1024));
  app.add_option("--plot", plot_path, "draw a plot with gnuplot into FILE.png or FILE.svg");
  app.add_option("--plot-script", plot_script, "also keep the gnuplot script (data inline) in this file");
  app.add_option("--plot-kind", plot_kind, "tokps | heatmap | breakdown | auto (by what was swept)");
  return guarded(app, argc, argv, [&] {
    check_outputs({{csv_path == "-" ? "" : csv_path, "--output"},
                   {json_path, "--json"},
                   {plot_path, "--plot"},
                   {plot_script, "--plot-script"}},
                  {args.model_path.value_or(""), args.hardware.value_or("")});
    const Grid grid = make_grid(lists);
    const size_t total = grid.size();
    PlotKind kind = PlotKind::Auto;
    if (!plot_path.empty() || plot_kind != "auto" || !plot_script.empty()) {
      if (plot_path.empty()) throw InputError("--plot-kind and --plot-script need --plot FILE.png", "--plot");
      check_plot_target(plot_path);
      plot_safe(plot_script, "the plot script path", "--plot-script");
      // The title's names, before any point runs (a scenario the sweep itself would refuse is
      // left to the sweep's own error).
      std::optional<Scenario> base;
      try {
        base = resolve_scenario(args);
      } catch (const InputError&) {
      }
      if (base) check_plot_names(*base);
      check_plot_tools();
      kind = choose_plot_kind(parse_plot_kind(plot_kind), grid, grid.allreduce);
    }

    const bool csv_out = !csv_path.empty() || (json_path.empty() && plot_path.empty());
    check_sweep_memory(total, csv_out, !json_path.empty());

    std::atomic<size_t> done{0};
    SweepInput in{args, grid, threads, &done};
    const auto t0 = std::chrono::steady_clock::now();
    SweepResult r;
    {
      std::optional<ProgressBar> bar;
      if (::isatty(2)) bar.emplace(done, total);
      r = run_sweep(in);
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cerr << sweep_summary(r, secs, threads);
    if (r.evaluated == 0)
      throw InputError("no point of the grid could be evaluated; the first reason: " +
                           (r.skipped.empty() ? std::string("empty grid") : r.skipped.front().reason),
                       "");

    const bool to_stdout = csv_path == "-" || (csv_path.empty() && json_path.empty() && plot_path.empty());
    // The plot first (gnuplot may fail), then the CSV and JSON together.
    if (!plot_path.empty()) draw_plot(r, grid, kind, plot_path, plot_script);
    const bool csv_file = !csv_path.empty() && csv_path != "-";
    write_outputs_atomic({{OutputFile{csv_file ? csv_path : "", "--output"}, csv_file ? sweep_csv(r, threads) : ""},
                          {OutputFile{json_path, "--json"}, json_path.empty() ? "" : sweep_json(r, grid, threads)}});
    if (to_stdout) {
      const std::string csv = sweep_csv(r, threads);
      std::fwrite(csv.data(), 1, csv.size(), stdout);
    }
    return kExitOk;
  });
}

}  // namespace specsim::cli
