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

// The file every writer replaces when asked to write `path` (atomically: a
// temporary in that file's directory, renamed over it): `path` itself or, when
// `path` is a symbolic link, the file the link points to, so the link stays and
// leads to the new contents. Throws InputError naming `path` when that cannot
// be done: the directory does not exist, the target is a directory, or it has
// other hard links (they would keep the old contents).
//
// Test hooks, so that a test can kill the process at a file boundary
// (tests/nbody/test_nbody_cli.py): with TREETRAV_TEST_PAUSE_BEFORE_WRITE=<file
// name> in the environment, the writer of a file of that name prints
// "treetrav: test hook: paused before the write of <name>" to stderr and sleeps
// 60 s before it creates the temporary; with TREETRAV_TEST_PAUSE_IN_WRITE, the
// same ("inside") once the temporary holds every dataset but is not yet closed
// and renamed.
std::string output_target(std::string const& path);

// The /RunMetadata attributes of a file written by any treetrav writer
// (empty when the group is absent).
Metadata read_metadata(std::string const& path);

}  // namespace treetrav::io
