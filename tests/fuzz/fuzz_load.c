/* fuzz_load.c - libFuzzer target for the ONNX loader: any bytes must give
 * either a model that passes the IR validator and saves, or one error, with
 * no crash, hang or leak.  `make fuzz-load` runs it (FUZZ_SECONDS=60).
 * Crash inputs found go to tests/fuzz/load-seeds/ as regression seeds; the
 * suite in check_fuzz_seeds.c replays every seed in `make test`. */
#include <stdint.h>
#include <stdlib.h>

#include "ir/ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Diag d;
	diag_init(&d, NULL);
	/* no folder: external data references are refused, never read; the
	 * bytes outlive the model, so large tensors are aliased (zero-copy) */
	LoadOptions lo = {.borrow = true};
	IrModel *m = ir_load_bytes(data, size, "fuzz.onnx", NULL, &lo, &d);
	if (!m)
		return 0;
	if (!ir_validate(m, &d))
		abort();
	uint8_t *out;
	size_t len;
	if (ir_save_bytes(m, &out, &len, &d))
		free(out);
	ir_model_free(m);
	return 0;
}
