/* geometry.c - index arithmetic of ops shared by inference, the evaluator
 * and the engine (see geometry.h). */
#include "geometry.h"

int64_t ir_slice_range(int64_t d, int64_t start, int64_t end, int64_t step, int64_t *first)
{
	int64_t n;
	if (start < 0)
		start += d;
	if (end < 0)
		end += d;
	if (step > 0) {
		start = start < 0 ? 0 : start > d ? d : start;
		end = end < 0 ? 0 : end > d ? d : end;
		n = end > start ? (int64_t)((uint64_t)(end - start - 1) / (uint64_t)step) + 1 : 0;
	} else {
		/* an empty axis has nothing to take backwards either (the clamp
		 * of the start to [0, d - 1] would give 0 on it) */
		start = start < 0 ? 0 : start > d - 1 ? d - 1 : start;
		end = end < -1 ? -1 : end > d - 1 ? d - 1 : end;
		n = d > 0 && start > end ? (int64_t)((uint64_t)(start - end - 1) / ((uint64_t)0 - (uint64_t)step)) + 1 : 0;
	}
	*first = n > 0 ? start : 0;
	return n;
}
