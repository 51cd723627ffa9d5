#include "common.hpp"
namespace treetrav::cli {
void add_generate_command(CLI::App&) {}
}  // namespace treetrav::cli
