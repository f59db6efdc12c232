/* graph_gen.h - the structure-aware graph fuzzer's one entry point, shared
 * by the libFuzzer target (fuzz_graph.c) and the replay of its crashers in
 * `make test` (check_fuzzcases.c).  See graph_gen.c. */
#ifndef GRAFT_GRAPH_GEN_H
#define GRAFT_GRAPH_GEN_H

#include <stddef.h>
#include <stdint.h>

/* Build a model from the choices in data, then load, infer, optimize (two
 * ways), save, reload and run it.  Returns 0; a bug crashes, aborts or
 * (FUZZ_GRAPH_DIFF=1 in the environment) traps on outputs that differ. */
int fuzz_graph_one(const uint8_t *data, size_t size);

/* The model fuzz_graph_one would build from data, packed (caller frees),
 * or NULL; for looking at a crasher (FUZZ_GRAPH_DUMP=FILE in fuzz_graph.c). */
uint8_t *fuzz_graph_model(const uint8_t *data, size_t size, size_t *len);

#endif
