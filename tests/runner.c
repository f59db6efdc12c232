/* runner.c - runs every Check suite.  The list of suites comes from
 * build/gen/suites.h, which the Makefile writes from tests/check_*.c, so a
 * new area needs no edit here.  CK_RUN_SUITE=<area> runs one suite;
 * CK_FORK=no makes failures debuggable under gdb or valgrind. */
#include <check.h>
#include <stdlib.h>

#define SUITE(area) Suite *suite_##area(void);
#include "gen/suites.h"
#undef SUITE

int main(void)
{
	SRunner *sr = srunner_create(NULL);
#define SUITE(area) srunner_add_suite(sr, suite_##area());
#include "gen/suites.h"
#undef SUITE
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
