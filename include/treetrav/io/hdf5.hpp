#pragma once

#include <treetrav/io/metadata.hpp>

#include <string>

namespace treetrav::io {

// "major.minor.release" of the HDF5 library treetrav runs with.
std::string hdf5_library_version();

// Which of treetrav's layouts an HDF5 file holds, by its top-level group
// (/Points, /Results or /PartType1). Throws InputError if it cannot be opened.
enum class FileKind { points, results, snapshot, unknown };
FileKind detect_file_kind(std::string const& path);
char const* to_string(FileKind kind);

// The /RunMetadata attributes of a file written by any treetrav writer
// (empty when the group is absent).
Metadata read_metadata(std::string const& path);

}  // namespace treetrav::io
