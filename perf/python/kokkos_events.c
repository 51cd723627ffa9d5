/* A Kokkos Tools library that prints, between two markers, every kernel,
 * reduction, scan, deep copy, allocation and fence a program asks Kokkos
 * for, with their labels: which calls of one KDTree.query wait for the GPU
 * (perf/python/trace_syncs.py; a device image without gdb).
 *   gcc -shared -fPIC -O1 -o kokkos_events.so perf/python/kokkos_events.c
 *   KOKKOS_PROFILE_LIBRARY=./kokkos_events.so python3 perf/python/trace_syncs.py
 * Printing starts when the environment variable TREETRAV_TRACE_FILE names a
 * file that exists (the script creates it after its warm-up) and stops when
 * the file is gone. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct SpaceHandle {
  char name[64];
};

static int tracing(void) {
  char const* file = getenv("TREETRAV_TRACE_FILE");
  return file != NULL && access(file, F_OK) == 0;
}

void kokkosp_init_library(int level, uint64_t version, uint32_t devices, void* info) {
  (void)level, (void)version, (void)devices, (void)info;
}
void kokkosp_finalize_library(void) {}

static uint64_t next_id = 0;
static void event(char const* what, char const* name) {
  if (tracing())
    fprintf(stderr, "kokkos: %s %s\n", what, name);
}
void kokkosp_begin_parallel_for(char const* name, uint32_t device, uint64_t* id) {
  (void)device, *id = next_id++;
  event("parallel_for", name);
}
void kokkosp_end_parallel_for(uint64_t id) { (void)id; }
void kokkosp_begin_parallel_reduce(char const* name, uint32_t device, uint64_t* id) {
  (void)device, *id = next_id++;
  event("parallel_reduce", name);
}
void kokkosp_end_parallel_reduce(uint64_t id) { (void)id; }
void kokkosp_begin_parallel_scan(char const* name, uint32_t device, uint64_t* id) {
  (void)device, *id = next_id++;
  event("parallel_scan", name);
}
void kokkosp_end_parallel_scan(uint64_t id) { (void)id; }
void kokkosp_begin_fence(char const* name, uint32_t device, uint64_t* id) {
  (void)device, *id = next_id++;
  event("fence", name);
}
void kokkosp_end_fence(uint64_t id) { (void)id; }
void kokkosp_allocate_data(struct SpaceHandle space, char const* label, void const* ptr,
                           uint64_t size) {
  (void)ptr;
  if (tracing())
    fprintf(stderr, "kokkos: allocate %s %s %llu\n", space.name, label, (unsigned long long)size);
}
void kokkosp_deallocate_data(struct SpaceHandle space, char const* label, void const* ptr,
                             uint64_t size) {
  (void)ptr, (void)size;
  if (tracing())
    fprintf(stderr, "kokkos: deallocate %s %s\n", space.name, label);
}
void kokkosp_begin_deep_copy(struct SpaceHandle dst_space, char const* dst_name, void const* dst,
                             struct SpaceHandle src_space, char const* src_name, void const* src,
                             uint64_t size) {
  (void)dst, (void)src;
  if (tracing())
    fprintf(stderr, "kokkos: deep_copy %s:%s <- %s:%s %llu bytes\n", dst_space.name, dst_name,
            src_space.name, src_name, (unsigned long long)size);
}
void kokkosp_end_deep_copy(void) {}
void kokkosp_push_profile_region(char const* name) { event("region", name); }
void kokkosp_pop_profile_region(void) {}
