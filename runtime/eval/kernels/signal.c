/* signal.c - signal-processing kernels: DFT, STFT, the Hann, Hamming and
 * Blackman windows, MelWeightMatrix, and TfIdfVectorizer (n-gram counting,
 * kept here as the other "feature extraction" op).
 *
 * The transforms are plain O(n^2) DFTs in double: each twiddle angle is
 * reduced as 2*pi*((j*k) mod n)/n so large indices lose no precision, the
 * products are added in increasing j, and each output is rounded once to its
 * type.  numpy's FFT (the reference) orders its sums differently, so results
 * agree to rounding, not bit for bit. */
#include "runtime/eval/eval.h"
#include "nn_util.h"
#include "sh_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* One complex DFT of length n over m input points (m <= n; missing points are
 * zero): out[k] for k < nout.  in: re/im interleaved with stride istr
 * (complex elements); out likewise with ostr. */
static void dft1(const double *in, int64_t m, int64_t istr, int64_t n, bool inverse, double *out, int64_t ostr,
                 int64_t nout)
{
	double sign = inverse ? 1.0 : -1.0;
	for (int64_t k = 0; k < nout; k++) {
		double re = 0, im = 0;
		for (int64_t j = 0; j < m && j < n; j++) {
			double ang = sign * 2.0 * M_PI * (double)((j * k) % n) / (double)n;
			double c = cos(ang), s = sin(ang);
			double xr = in[2 * j * istr], xi = in[2 * j * istr + 1];
			re += xr * c - xi * s;
			im += xr * s + xi * c;
		}
		if (inverse) {
			re /= (double)n;
			im /= (double)n;
		}
		out[2 * k * ostr] = re;
		out[2 * k * ostr + 1] = im;
	}
}

static bool scalar_int(EvCtx *c, const EvValue *t, const char *what, int64_t *v)
{
	if (!t || t->kind != EV_TENSOR || t->numel != 1 || ev_is_float(t->dtype))
		return ev_fail(c, "%s must be a one-element integer tensor", what);
	*v = ev_get_i(t, 0);
	return true;
}

/* ---- DFT ------------------------------------------------------------------------ */

static bool run_dft(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0];
	if (!x || x->kind != EV_TENSOR || !nn_is_float_type(x->dtype))
		return ev_fail(c, "input must be a float tensor");
	int r = x->rank;
	if (r < 2 || (x->dims[r - 1] != 1 && x->dims[r - 1] != 2))
		return ev_fail(c, "input's last dimension must be 1 (real) or 2 (complex)");
	int64_t axis;
	if (c->opset >= 20) {
		axis = -2;
		if (nin > 2 && in[2] && !scalar_int(c, in[2], "axis", &axis))
			return false;
	} else {
		axis = ev_attr_int(c, "axis", 1);
	}
	if (axis < 0)
		axis += r;
	if (axis < 0 || axis >= r - 1)
		return ev_fail(c, "axis is out of range for rank %d", r);
	bool inverse = ev_attr_int(c, "inverse", 0) != 0, onesided = ev_attr_int(c, "onesided", 0) != 0;
	int64_t m = x->dims[axis], n = m;
	if (nin > 1 && in[1] && in[1]->numel > 0 && !scalar_int(c, in[1], "dft_length", &n))
		return false;
	if (n < 1)
		return ev_fail(c, "dft_length must be positive");
	int64_t nk = onesided ? n / 2 + 1 : n;
	int64_t dims[EV_MAX_RANK];
	memcpy(dims, x->dims, sizeof *dims * (size_t)r);
	dims[axis] = nk;
	dims[r - 1] = 2;
	EvValue *y = nn_new(c, x->dtype, r, dims);
	if (!y)
		return false;
	/* complex copy of x: [outer][m][inner] */
	int64_t outer = nn_prod(x->dims, axis), inner = nn_prod(x->dims + axis + 1, r - 2 - axis);
	bool cplx = x->dims[r - 1] == 2;
	double *xc = nn_alloc(sizeof(double) * 2 * (size_t)(outer * m * inner + 1));
	for (int64_t i = 0; i < outer * m * inner; i++) {
		xc[2 * i] = ev_get_f(x, cplx ? 2 * i : i);
		xc[2 * i + 1] = cplx ? ev_get_f(x, 2 * i + 1) : 0;
	}
	double *yc = nn_alloc(sizeof(double) * 2 * (size_t)(outer * nk * inner + 1));
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++)
			dft1(xc + 2 * (o * m * inner + i), m, inner, n, inverse, yc + 2 * (o * nk * inner + i), inner, nk);
	for (int64_t i = 0; i < y->numel; i++)
		ev_set_f(y, i, yc[i]);
	free(xc);
	free(yc);
	out[0] = y;
	return true;
}

/* ---- STFT ----------------------------------------------------------------------- */

static bool run_stft(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0], *win = nin > 2 ? in[2] : NULL, *fl = nin > 3 ? in[3] : NULL;
	if (!x || x->kind != EV_TENSOR || !nn_is_float_type(x->dtype) || x->rank != 3 ||
	    (x->dims[2] != 1 && x->dims[2] != 2))
		return ev_fail(c, "signal must be a float tensor (batch, length, 1 or 2)");
	int64_t step, flen = -1;
	if (!scalar_int(c, nin > 1 ? in[1] : NULL, "frame_step", &step))
		return false;
	if (fl && !scalar_int(c, fl, "frame_length", &flen))
		return false;
	if (win && (win->rank != 1 || (flen >= 0 && win->numel != flen)))
		return ev_fail(c, "window must be 1-D with frame_length elements");
	if (flen < 0)
		flen = win ? win->numel : -1;
	if (flen < 1 || step < 1)
		return ev_fail(c, "frame_length and frame_step must be positive");
	int64_t nb = x->dims[0], len = x->dims[1];
	if (len < flen)
		return ev_fail(c, "signal is shorter than one frame");
	bool onesided = ev_attr_int(c, "onesided", 1) != 0, cplx = x->dims[2] == 2;
	int64_t nf = 1 + (len - flen) / step, nk = onesided ? flen / 2 + 1 : flen;
	int64_t dims[4] = {nb, nf, nk, 2};
	EvValue *y = nn_new(c, x->dtype, 4, dims);
	if (!y)
		return false;
	double *fr = nn_alloc(sizeof(double) * 2 * (size_t)flen), *res = nn_alloc(sizeof(double) * 2 * (size_t)nk);
	for (int64_t b = 0; b < nb; b++)
		for (int64_t f = 0; f < nf; f++) {
			for (int64_t j = 0; j < flen; j++) {
				int64_t at = b * len + f * step + j;
				double w = win ? ev_get_f(win, j) : 1.0;
				fr[2 * j] = ev_get_f(x, cplx ? 2 * at : at) * w;
				fr[2 * j + 1] = cplx ? ev_get_f(x, 2 * at + 1) * w : 0;
			}
			dft1(fr, flen, 1, flen, false, res, 1, nk);
			for (int64_t k = 0; k < 2 * nk; k++)
				ev_set_f(y, (b * nf + f) * nk * 2 + k, res[k]);
		}
	free(fr);
	free(res);
	out[0] = y;
	return true;
}

/* ---- windows -------------------------------------------------------------------- */

/* w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size (periodic)
 * or size - 1 (symmetric). */
static bool run_window(EvCtx *c, EvValue **in, double a0, double a1, double a2, EvValue **out)
{
	int64_t size;
	if (!scalar_int(c, in[0], "size", &size))
		return false;
	if (size < 0)
		return ev_fail(c, "size must not be negative");
	int dt = (int)ev_attr_int(c, "output_datatype", DT_FLOAT);
	bool periodic = ev_attr_int(c, "periodic", 1) != 0;
	EvValue *y = nn_new(c, dt, 1, &size);
	if (!y)
		return false;
	double den = periodic ? (double)size : (double)size - 1;
	for (int64_t i = 0; i < size; i++) {
		double t = den > 0 ? 2.0 * M_PI * (double)i / den : 0;
		ev_set_f(y, i, a0 - a1 * cos(t) + a2 * cos(2 * t));
	}
	out[0] = y;
	return true;
}

static bool run_hann(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return run_window(c, in, 0.5, 0.5, 0, out);
}

static bool run_hamming(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return run_window(c, in, 25.0 / 46.0, 1 - 25.0 / 46.0, 0, out);
}

static bool run_blackman(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return run_window(c, in, 0.42, 0.5, 0.08, out);
}

/* ---- MelWeightMatrix ------------------------------------------------------------ */

/* Triangular filters between mel-spaced points, as ONNX's reference. */
static bool run_mel(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	int64_t nmel, dftlen, rate;
	if (nin < 5 || !scalar_int(c, in[0], "num_mel_bins", &nmel) || !scalar_int(c, in[1], "dft_length", &dftlen) ||
	    !scalar_int(c, in[2], "sample_rate", &rate))
		return nin < 5 ? ev_fail(c, "MelWeightMatrix needs 5 inputs") : false;
	if (!in[3] || !in[4] || in[3]->numel != 1 || in[4]->numel != 1)
		return ev_fail(c, "lower_edge_hertz and upper_edge_hertz must be scalars");
	if (nmel < 1 || dftlen < 1 || rate < 1)
		return ev_fail(c, "num_mel_bins, dft_length and sample_rate must be positive");
	double lo = ev_get_f(in[3], 0), hi = ev_get_f(in[4], 0);
	int64_t nspec = dftlen / 2 + 1, dims[2] = {nspec, nmel};
	EvValue *y = nn_new(c, (int)ev_attr_int(c, "output_datatype", DT_FLOAT), 2, dims);
	if (!y)
		return false;
	double lmel = 2595 * log10(1 + lo / 700), hmel = 2595 * log10(1 + hi / 700);
	double step = (hmel - lmel) / (double)(nmel + 2);
	int64_t *bins = nn_alloc(sizeof(int64_t) * (size_t)(nmel + 2));
	for (int64_t i = 0; i < nmel + 2; i++) {
		double f = (double)i * step + lmel;
		f = 700 * (pow(10, f / 2595) - 1);
		bins[i] = (int64_t)floor((double)(dftlen + 1) * f / (double)rate);
	}
	bool ok = true;
	for (int64_t i = 0; i < nmel && ok; i++) {
		int64_t l = bins[i], ce = bins[i + 1], h = bins[i + 2];
		if (l < 0 || h >= nspec || l > ce || ce > h) {
			ok = ev_fail(c, "mel band %lld falls outside the spectrogram bins", (long long)i);
			break;
		}
		if (ce == l)
			ev_set_f(y, ce * nmel + i, 1);
		else
			for (int64_t j = l; j <= ce; j++)
				ev_set_f(y, j * nmel + i, (double)(j - l) / (double)(ce - l));
		for (int64_t j = ce; j < h; j++)
			ev_set_f(y, j * nmel + i, (double)(h - j) / (double)(h - ce));
	}
	free(bins);
	if (!ok) {
		ev_unref(y);
		return false;
	}
	out[0] = y;
	return true;
}

/* ---- TfIdfVectorizer ------------------------------------------------------------ */

/* Each row's n-grams (n in [min, max], items skip+1 apart for skip up to
 * max_skip_count; unigrams once) are looked up in the pool; ngram_indexes
 * gives each pool entry's output column.  TF counts, IDF gives the weight
 * (1 without weights) of any present n-gram, TFIDF count * weight. */
typedef struct Tfidf {
	const EvValue *x;
	bool str;
	const int64_t *pool_i;
	const IrBytes *pool_s;
	int64_t npool;          /* items in the pool */
	const int64_t *counts;  /* ngram_counts */
	int ncounts;
	const int64_t *idx;     /* ngram_indexes */
	int nidx;
} Tfidf;

static bool item_eq(const Tfidf *t, int64_t xi, int64_t pi)
{
	if (t->str) {
		const char *s = ((char *const *)t->x->data)[xi];
		size_t l = s ? strlen(s) : 0;
		return l == t->pool_s[pi].len && (l == 0 || !memcmp(s, t->pool_s[pi].data, l));
	}
	return ev_get_i(t->x, xi) == t->pool_i[pi];
}

/* Column of the n-gram whose items are x[pos[0..n)], or -1. */
static int64_t find_gram(const Tfidf *t, const int64_t *pos, int64_t n)
{
	if (n > t->ncounts)
		return -1;
	int64_t start = t->counts[n - 1], end = n < t->ncounts ? t->counts[n] : t->npool;
	int64_t first = 0;
	for (int64_t k = 0; k < n - 1; k++)
		first += (k < t->ncounts - 1 ? (t->counts[k + 1] - t->counts[k]) / (k + 1) : 0);
	for (int64_t g = 0, p = start; p + n <= end; g++, p += n) {
		bool eq = true;
		for (int64_t k = 0; k < n && eq; k++)
			eq = item_eq(t, pos[k], p + k);
		if (eq) {
			int64_t gi = first + g;
			return gi < t->nidx ? t->idx[gi] : -1;
		}
	}
	return -1;
}

static bool run_tfidf(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	const EvValue *x = in[0];
	if (!x || x->kind != EV_TENSOR || (x->rank != 1 && x->rank != 2))
		return ev_fail(c, "X must be a 1-D or 2-D tensor");
	Tfidf t = {.x = x, .str = x->dtype == DT_STRING};
	if (!t.str && x->dtype != DT_INT32 && x->dtype != DT_INT64)
		return ev_fail(c, "X: unsupported dtype %s", dtype_name(x->dtype));
	int64_t minn = ev_attr_int(c, "min_gram_length", 1), maxn = ev_attr_int(c, "max_gram_length", 1);
	int64_t maxskip = ev_attr_int(c, "max_skip_count", 0);
	char buf[16];
	const char *mode = ev_attr_string(c, "mode", "TF", buf, sizeof buf);
	int md = !strcmp(mode, "TF") ? 0 : !strcmp(mode, "IDF") ? 1 : !strcmp(mode, "TFIDF") ? 2 : -1;
	if (md < 0)
		return ev_fail(c, "unknown mode '%s'", mode);
	t.counts = ev_attr_ints(c, "ngram_counts", &t.ncounts);
	t.idx = ev_attr_ints(c, "ngram_indexes", &t.nidx);
	int nw;
	const float *weights = ev_attr_floats(c, "weights", &nw);
	if (t.str) {
		const IrAttr *a = ev_attr(c, "pool_strings");
		if (!a)
			return ev_fail(c, "string input needs pool_strings");
		t.pool_s = a->strings;
		t.npool = (int64_t)a->n;
	} else {
		int np;
		t.pool_i = ev_attr_ints(c, "pool_int64s", &np);
		if (!t.pool_i)
			return ev_fail(c, "integer input needs pool_int64s");
		t.npool = np;
	}
	if (!t.counts || t.ncounts < 1 || !t.idx || t.nidx < 1 || minn < 1 || maxn < minn)
		return ev_fail(c, "ngram_counts, ngram_indexes and gram lengths must be set");
	int64_t ncol = 0;
	for (int i = 0; i < t.nidx; i++)
		if (t.idx[i] + 1 > ncol)
			ncol = t.idx[i] + 1;
	int64_t rows = x->rank == 2 ? x->dims[0] : 1, len = x->dims[x->rank - 1];
	int64_t dims[2] = {rows, ncol};
	EvValue *y = x->rank == 2 ? nn_new(c, DT_FLOAT, 2, dims) : nn_new(c, DT_FLOAT, 1, &ncol);
	if (!y)
		return false;
	float *yv = y->data;
	int64_t pos[64];
	if (maxn > 64) {
		ev_unref(y);
		return ev_fail(c, "max_gram_length %lld is over 64", (long long)maxn);
	}
	for (int64_t r = 0; r < rows; r++)
		for (int64_t s = 0; s < len; s++)
			for (int64_t sk = 0; sk <= maxskip; sk++)
				for (int64_t n = minn; n <= maxn; n++) {
					if (n == 1 && sk > 0)
						continue;
					if (s + (n - 1) * (sk + 1) >= len)
						break;
					for (int64_t k = 0; k < n; k++)
						pos[k] = r * len + s + k * (sk + 1);
					int64_t col = find_gram(&t, pos, n);
					if (col >= 0 && col < ncol)
						yv[r * ncol + col] += 1;
				}
	for (int64_t r = 0; r < rows; r++)
		for (int64_t k = 0; k < ncol; k++) {
			float *v = &yv[r * ncol + k];
			/* the weight of output column k: of the pool entry mapped to it */
			float w = 1;
			if (weights)
				for (int i = 0; i < t.nidx && i < nw; i++)
					if (t.idx[i] == k)
						w = weights[i];
			if (md == 1)
				*v = *v > 0 ? w : 0;
			else if (md == 2)
				*v = *v * w;
		}
	out[0] = y;
	return true;
}

const EvKernel ev_kernels_signal[] = {
	EV_KERNEL(DFT, run_dft, NN_FLOATS),
	EV_KERNEL(STFT, run_stft, NN_FLOATS),
	EV_KERNEL(HannWindow, run_hann, NN_NUMERIC),
	EV_KERNEL(HammingWindow, run_hamming, NN_NUMERIC),
	EV_KERNEL(BlackmanWindow, run_blackman, NN_NUMERIC),
	EV_KERNEL(MelWeightMatrix, run_mel, NN_NUMERIC),
	EV_KERNEL(TfIdfVectorizer, run_tfidf, NN_BIT(DT_INT32) | NN_BIT(DT_INT64) | NN_BIT(DT_STRING) | NN_BIT(DT_FLOAT)),
	{0},
};
