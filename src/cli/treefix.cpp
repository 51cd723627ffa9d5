// treetrav treefix: rootfix or leaffix of a tree file on any backend, by the
// level-synchronous (bfs) or Euler-tour (euler) method.
// treetrav treefix-generate: a deterministic tree file of a chosen shape.
#include "common.hpp"

#include <treetrav/core/error.hpp>
#include <treetrav/io/tree_file.hpp>
#include <treetrav/treefix/generators.hpp>
#include <treetrav/treefix/treefix.hpp>
#include <treetrav/version.hpp>

#include <fmt/core.h>

#include <memory>
#include <vector>

namespace treetrav::cli {
namespace {

struct TreefixOptions {
  std::string treefix;
  std::string method = "auto";
  std::string input;
  std::string output;
  RuntimeOptions runtime;
};

struct GenerateTreeOptions {
  std::string shape;
  Index n = 0;
  std::int64_t seed = 1;
  int arity = 2;
  std::string weights = "uniform";
  std::string output;
  RuntimeOptions runtime;
};

// Seconds taken by f, with the space drained before and after.
template <class ExecutionSpace, class F>
double fenced_seconds(ExecutionSpace const& space, F&& f) {
  space.fence();
  Kokkos::Timer timer;
  f();
  space.fence();
  return timer.seconds();
}

// Weighted files are summed in double; without weights every vertex counts 1,
// exactly, so rootfix gives depth + 1 and leaffix the subtree size.
template <class ExecutionSpace>
io::TreefixResultFile run_treefix(ExecutionSpace const& space, TreefixOptions const& options,
                                  io::TreeFile const& file, Treefix kind, TreefixMethod method) {
  using Memory = typename ExecutionSpace::memory_space;
  Index const n = file.tree.size();
  bool const weighted = file.weights.extent(0) != 0;
  RootedTree<Memory> tree;
  Kokkos::View<double*, Memory> weights("treetrav::cli::treefix::weights", weighted ? n : 0);
  Kokkos::View<std::int64_t*, Memory> ones("treetrav::cli::treefix::ones", weighted ? 0 : n);
  double const transfer_in = fenced_seconds(space, [&] {
    tree = copy_tree(space, file.tree);
    if (weighted)
      Kokkos::deep_copy(space, weights, file.weights);
    else
      Kokkos::deep_copy(space, ones, 1);
  });

  io::TreefixResultFile result;
  result.treefix = options.treefix;
  double build = 0, compute = 0, transfer_out = 0;
  auto const run = [&](auto& treefix_method) {
    auto const compute_into = [&](auto const& op, auto const& in, auto& host_out) {
      Kokkos::View<typename std::decay_t<decltype(op)>::value_type*, Memory> out(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "treetrav::cli::treefix::results"),
          n);
      compute = fenced_seconds(space, [&] { treefix(space, kind, treefix_method, op, in, out); });
      transfer_out = fenced_seconds(
          space, [&] { host_out = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, out); });
    };
    if (weighted)
      compute_into(Sum<double>{}, weights, result.values);
    else
      compute_into(Sum<std::int64_t>{}, ones, result.counts);
  };
  if (method == TreefixMethod::bfs) {
    std::unique_ptr<LevelSynchronousTreefix<Memory>> bfs;
    build = fenced_seconds(
        space, [&] { bfs = std::make_unique<LevelSynchronousTreefix<Memory>>(space, tree); });
    run(*bfs);
  } else {
    std::unique_ptr<EulerTourTreefix<Memory>> euler;
    build = fenced_seconds(
        space, [&] { euler = std::make_unique<EulerTourTreefix<Memory>>(space, tree); });
    run(*euler);
  }
  result.metadata.set("input", options.input)
      .set("method", to_string(method))
      .set("method_requested", options.method)
      .set("weights", weighted ? "/Tree/Weight" : "none (unit weights)")
      .set("vertices", static_cast<double>(n))
      .set("height", static_cast<double>(file.tree.height()))
      .set("transfer_in_seconds", transfer_in)
      .set("build_seconds", build)
      .set("compute_seconds", compute)
      .set("transfer_out_seconds", transfer_out)
      .set("treetrav_version", TREETRAV_VERSION_STRING);
  return result;
}

void treefix_command(TreefixOptions const& options) {
  check_output_file({"-o", options.output}, {{"--input", options.input}});
  KokkosSession session(options.runtime);
  auto const file = io::read_tree(options.input);
  Treefix const kind = options.treefix == "rootfix" ? Treefix::rootfix : Treefix::leaffix;
  auto const method = options.method == "auto"  ? choose_method(file.tree, kind)
                      : options.method == "bfs" ? TreefixMethod::bfs
                                                : TreefixMethod::euler;
  auto result = dispatch_backend(session.backend(), [&](auto space) {
    return run_treefix(space, options, file, kind, method);
  });
  result.metadata.set("backend", to_string(session.backend()));
  io::write_treefix_result(options.output, result);
  fmt::print(
      "{} of {} vertices (height {}) by {} on {}: build {:.3f} ms, compute {:.3f} ms; wrote {}\n",
      result.treefix, file.tree.size(), file.tree.height(), to_string(method),
      to_string(session.backend()), 1e3 * result.metadata.numbers.at("build_seconds"),
      1e3 * result.metadata.numbers.at("compute_seconds"), options.output);
}

TreeShape shape_named(std::string const& name) {
  for (TreeShape shape : tree_shapes())
    if (to_string(shape) == name)
      return shape;
  throw InputError("unknown tree shape '" + name + "'");
}

void generate_tree_command(GenerateTreeOptions const& options, CLI::Option const* arity) {
  TreeShape const shape = shape_named(options.shape);
  if (arity->count() > 0 && shape != TreeShape::kary)
    throw InputError("--arity does not apply to --shape " + options.shape);
  check_output_file({"-o", options.output}, {});
  KokkosSession session(options.runtime);
  Kokkos::DefaultHostExecutionSpace const host;
  io::TreeFile file;
  file.tree = RootedTree<Kokkos::HostSpace>(
      host, generate_tree(host, shape, options.n, options.seed, options.arity));
  if (options.weights == "uniform")
    file.weights = uniform_weights<double>(host, options.n, options.seed);
  file.metadata.set("generator", options.shape)
      .set("seed", std::to_string(options.seed)) // text: a double cannot hold every 64-bit seed
      .set("n", static_cast<double>(options.n))
      .set("weights", options.weights)
      .set("treetrav_version", TREETRAV_VERSION_STRING);
  if (shape == TreeShape::kary)
    file.metadata.set("arity", static_cast<double>(options.arity));
  io::write_tree(options.output, file);
  fmt::print("wrote a {} tree of {} vertices (height {}, seed {}, {}) to {}\n", options.shape,
             options.n, file.tree.height(), options.seed,
             options.weights == "none" ? "no weights" : "uniform weights", options.output);
}

std::string shapes_help() {
  std::string help = "Shapes (--shape):\n";
  for (TreeShape shape : tree_shapes())
    help += fmt::format("  {:<12} {}\n", to_string(shape), describe(shape));
  return help + "The tree is a pure function of the options, on any thread count.";
}

} // namespace

void add_treefix_commands(CLI::App& app) {
  auto* treefix = app.add_subcommand(
      "treefix",
      "Rootfix (combine over ancestors) or leaffix (over descendants) of a tree file (HDF5)");
  treefix->footer(
      "Without /Tree/Weight every vertex weighs 1 and the result counts vertices exactly:\n"
      "rootfix gives depth + 1, leaffix the subtree size (/Treefix/Counts). With weights the\n"
      "sums are double (/Treefix/Values). --method auto picks bfs for the rootfix of trees of at\n"
      "least " +
      std::to_string(min_average_level_width) + " vertices per level on average, euler otherwise.");
  auto options = std::make_shared<TreefixOptions>();
  treefix->add_option("--op", options->treefix, "rootfix or leaffix")
      ->required()
      ->check(CLI::IsMember({"rootfix", "leaffix"}));
  treefix
      ->add_option("--method", options->method,
                   "bfs (level-synchronous), euler (Euler tour + scan) or auto")
      ->check(CLI::IsMember({"bfs", "euler", "auto"}))
      ->capture_default_str();
  treefix->add_option("--input", options->input, "Tree file (/Tree/Parent, optional /Tree/Weight)")
      ->required()
      ->check(file_name());
  treefix
      ->add_option(
          "-o,--output", options->output,
          "Result file (HDF5, written atomically; a symbolic link is followed, the input refused)")
      ->required()
      ->check(file_name());
  add_runtime_options(*treefix, options->runtime);
  treefix->callback([options] { treefix_command(*options); });

  auto* generate =
      app.add_subcommand("treefix-generate", "Write a deterministic tree file for treefix (HDF5)");
  generate->footer(shapes_help());
  auto generate_options = std::make_shared<GenerateTreeOptions>();
  std::vector<std::string> shape_names;
  for (TreeShape shape : tree_shapes())
    shape_names.push_back(to_string(shape));
  generate->add_option("--shape", generate_options->shape, "Tree shape (see below)")
      ->required()
      ->check(CLI::IsMember(shape_names));
  generate->add_option("-n", generate_options->n, "Number of vertices")
      ->required()
      ->check(in_range(Index{1}, max_tree_vertices));
  generate->add_option("--seed", generate_options->seed, "Seed (random, grid, rgg)")
      ->check(at_least(std::int64_t{0}))
      ->capture_default_str();
  auto* arity =
      generate->add_option("--arity", generate_options->arity, "Children per vertex (kary)")
          ->check(at_least(1))
          ->capture_default_str();
  generate
      ->add_option("--weights", generate_options->weights, "uniform in [0, 1) (float64), or none")
      ->check(CLI::IsMember({"uniform", "none"}))
      ->capture_default_str();
  generate
      ->add_option("-o,--output", generate_options->output,
                   "Tree file (HDF5, written atomically; a symbolic link is followed)")
      ->required()
      ->check(file_name());
  add_runtime_options(*generate, generate_options->runtime, false);
  generate->callback(
      [generate_options, arity] { generate_tree_command(*generate_options, arity); });
}

} // namespace treetrav::cli
