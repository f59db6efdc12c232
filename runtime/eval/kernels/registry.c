/* registry.c - finds the standard kernel for an op of the default domain
 * (ev_kernel_std).  Each family file in runtime/eval/kernels/ exports
 * ev_kernels_<family>[] (ending with {NULL}); the Makefile lists the
 * families in build/gen/kernel_families.h, so adding a family needs no edit
 * here.  Entries name their op by kind (EV_KERNEL: a misspelt op does not
 * compile); lookup is by OpKind through a table built on first use.  It sits
 * above the families and below what builds on them: vendor.c's
 * com.microsoft kernels call standard ones through it, and eval.c's
 * ev_kernel_find picks between the two by domain. */
#include "runtime/eval/eval.h"

#include <stdlib.h>

#define FAMILY(f) extern const EvKernel ev_kernels_##f[];
#include "gen/kernel_families.h"
#undef FAMILY

static const EvKernel *const families[] = {
#define FAMILY(f) ev_kernels_##f,
#include "gen/kernel_families.h"
#undef FAMILY
	NULL,
};

static const EvKernel *by_kind[OP_COUNT];
static const EvKernel **all;
static size_t nall;

static void build(void)
{
	if (all)
		return;
	size_t n = 0;
	for (size_t f = 0; families[f]; f++)
		for (const EvKernel *k = families[f]; k->op; k++)
			n++;
	all = calloc(n + 1, sizeof *all);
	if (!all)
		ev_out_of_memory();
	for (size_t f = 0; families[f]; f++)
		for (const EvKernel *k = families[f]; k->op; k++) {
			all[nall++] = k;
			if (!by_kind[k->kind])
				by_kind[k->kind] = k;
		}
}

const EvKernel *ev_kernel_std(const char *op)
{
	build();
	OpKind kind = op_kind_lookup(op);
	return kind == OP_UNKNOWN ? NULL : by_kind[kind];
}

const EvKernel *const *ev_kernels_all(size_t *n)
{
	build();
	*n = nall;
	return all;
}
