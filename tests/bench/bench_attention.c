/* bench_attention.c - `make bench`: the Attention kernel's two schedules
 * (runtime/eval/attention.h) on long sequences: the naive one, which
 * materializes the q_len x kv_len score matrix of each head, and the flash
 * one (tiles of ATT_BQ x ATT_BK scores, online softmax).  For each length:
 * the median time of each over interleaved runs, their ratio, the scratch
 * memory each needs for scores, and the largest difference between their
 * outputs (float rounding only).  One head of size 64, causal off. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/eval/attention.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static float *fill(int64_t n, uint32_t seed)
{
	float *p = malloc(sizeof(float) * (size_t)n);
	if (!p) {
		fprintf(stderr, "bench-attention: out of memory\n");
		exit(1);
	}
	uint32_t x = seed;
	for (int64_t i = 0; i < n; i++) {
		x = x * 1664525u + 1013904223u;
		p[i] = (float)((x >> 8) & 0xffff) / 32768.0f - 1.0f;
	}
	return p;
}

int main(int argc, char **argv)
{
	int64_t lens[] = {512, 1024, 2048, 4096};
	int nlens = argc > 1 ? 1 : 4;
	if (argc > 1)
		lens[0] = atoll(argv[1]);
	const int64_t d = 64;
	enum { RUNS = 3 };
	printf("Attention kernel, one head of 64, float32: naive (whole score matrix) vs flash (tiles of %d x %d)\n",
	       ATT_BQ, ATT_BK);
	printf("%8s %12s %12s %8s %16s %16s %12s\n", "seq", "naive ms", "flash ms", "ratio", "naive scratch",
	       "flash scratch", "max diff");
	for (int li = 0; li < nlens; li++) {
		int64_t n = lens[li];
		float *q = fill(n * d, 1), *k = fill(n * d, 2), *v = fill(n * d, 3);
		float *y1 = malloc(sizeof(float) * (size_t)(n * d)), *y2 = malloc(sizeof(float) * (size_t)(n * d));
		AttShape s = {.batch = 1, .q_heads = 1, .kv_heads = 1, .q_len = n, .kv_len = n, .head = d, .v_head = d,
		              .scale = 1.0 / sqrt((double)d)};
		AttInputs in = {.q = q, .k = k, .v = v};
		double tn[RUNS], tf[RUNS];
		for (int r = 0; r < RUNS; r++) {
			double t0 = now();
			att_naive_f32(&s, &in, y1);
			double t1 = now();
			att_flash_f32(&s, &in, y2);
			tf[r] = now() - t1;
			tn[r] = t1 - t0;
		}
		qsort(tn, RUNS, sizeof(double), cmp_double);
		qsort(tf, RUNS, sizeof(double), cmp_double);
		double diff = 0;
		for (int64_t i = 0; i < n * d; i++)
			if (fabs((double)y1[i] - y2[i]) > diff)
				diff = fabs((double)y1[i] - y2[i]);
		double naive_mb = (double)(n * n + n) * sizeof(float) / 1048576.0;
		double flash_kb = (double)(ATT_BQ * ATT_BK + ATT_BQ * d + 2 * ATT_BQ) * sizeof(float) / 1024.0;
		printf("%8lld %12.1f %12.1f %7.2fx %13.1f MB %13.1f KB %12.2g\n", (long long)n, tn[RUNS / 2] * 1e3,
		       tf[RUNS / 2] * 1e3, tn[RUNS / 2] / tf[RUNS / 2], naive_mb, flash_kb, diff);
		free(q);
		free(k);
		free(v);
		free(y1);
		free(y2);
	}
	return 0;
}
