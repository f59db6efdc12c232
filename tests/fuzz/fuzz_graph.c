/* fuzz_graph.c - libFuzzer target for the whole pipeline on generated
 * graphs: the bytes are choices from which graph_gen.c builds a model out
 * of the op schema table, then loads, infers, optimizes, saves, reloads and
 * runs it.  `make fuzz-graph` runs it (FUZZ_GRAPH_SECONDS=60) from the seeds
 * in tests/fuzz/graph-seeds/; crashers found go to tests/fuzz/graph-crashers/
 * once fixed, and check_fuzzcases.c replays them in `make test`.
 * FUZZ_GRAPH_DUMP=FILE: write the model of each input run to FILE (to look
 * at a crasher with graft print), FUZZ_GRAPH_DIFF=1: trap on outputs that
 * differ, FUZZ_GRAPH_DIMS=1: trap on an inferred dim the kernels contradict,
 * FUZZ_GRAPH_VERBOSE=1: print every stage's errors. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph_gen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dump = getenv("FUZZ_GRAPH_DUMP");
	if (dump && *dump) {
		size_t len;
		uint8_t *buf = fuzz_graph_model(data, size, &len);
		FILE *f = buf ? fopen(dump, "wb") : NULL;
		if (f) {
			fwrite(buf, 1, len, f);
			fclose(f);
		}
		free(buf);
	}
	return fuzz_graph_one(data, size);
}
