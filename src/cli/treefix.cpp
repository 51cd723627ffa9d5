#include "common.hpp"
namespace treetrav::cli {
void add_treefix_commands(CLI::App&) {}
}  // namespace treetrav::cli
