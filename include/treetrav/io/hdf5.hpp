#pragma once

#include <string>

namespace treetrav::io {

// "major.minor.release" of the HDF5 library treetrav runs with.
std::string hdf5_library_version();

}  // namespace treetrav::io
