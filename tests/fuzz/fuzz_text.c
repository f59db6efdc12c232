/* fuzz_text.c - libFuzzer target for the ONNX text parser (ir/text_*):
 * any bytes give either a model that validates, prints and saves, or
 * errors, with no crash, hang or leak.  `make fuzz-text` runs it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ir/ir.h"
#include "ir/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = ir_parse_model((const char *)data, size, "fuzz.txt", &d);
	if (!m)
		return 0;
	if (d.nerrors == 0 && !ir_validate(m, &d))
		abort();
	FILE *null = fopen("/dev/null", "w");
	ir_print_model(m, null, &d);
	fclose(null);
	uint8_t *out;
	size_t len;
	if (ir_save_bytes(m, &out, &len, &d))
		free(out);
	ir_model_free(m);
	return 0;
}
