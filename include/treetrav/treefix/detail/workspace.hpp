#pragma once
// Moved to core/detail/workspace.hpp; kept only for schedule/detail/regtt_traverse.hpp (delete once it includes the new path).
#include <treetrav/core/detail/workspace.hpp>
