/* rnn.c - the recurrent layers RNN, GRU and LSTM: one direction at a time
 * (forward, reverse, or both for "bidirectional"), with sequence_lens,
 * initial states, biases, LSTM peepholes and input_forget, GRU's
 * linear_before_reset, activation lists with their alphas/betas, clip, and
 * the layout attribute (0: time-major X (seq, batch, in); 1: batch-major).
 *
 * A recurrent layer is a composite of many matrix products whose reference
 * (numpy's BLAS dot) has no fixed summation order, so there is no single
 * "exact" float32 result to match.  These kernels compute every gate in
 * double, adding the products in increasing index, and round each output
 * once to its type: at least as accurate as any float32 ordering.  Steps past
 * a batch entry's sequence length produce zeros in Y and leave the state as
 * it was, so Y_h / Y_c hold the state after the last valid step. */
#include "runtime/eval/eval.h"
#include "nn_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { A_RELU, A_TANH, A_SIGMOID, A_AFFINE, A_LEAKY, A_THRESH, A_STANH, A_HSIG, A_ELU, A_SOFTSIGN, A_SOFTPLUS };

typedef struct Act {
	int kind;
	double a, b;
} Act;

static double act(const Act *f, double x)
{
	switch (f->kind) {
	case A_RELU: return x > 0 ? x : 0;
	case A_TANH: return tanh(x);
	case A_SIGMOID: return 1.0 / (1.0 + exp(-x));
	case A_AFFINE: return f->a * x + f->b;
	case A_LEAKY: return x >= 0 ? x : f->a * x;
	case A_THRESH: return x > f->a ? x : 0;
	case A_STANH: return f->a * tanh(f->b * x);
	case A_HSIG: {
		double v = f->a * x + f->b;
		return v < 0 ? 0 : v > 1 ? 1 : v;
	}
	case A_ELU: return x >= 0 ? x : f->a * (exp(x) - 1);
	case A_SOFTSIGN: return x / (1 + fabs(x));
	case A_SOFTPLUS: return log1p(exp(x));
	default: return x;
	}
}

static const struct {
	const char *name;
	int kind, nparams;
	double a, b;        /* defaults */
} act_names[] = {
	{"Relu", A_RELU, 0, 0, 0},          {"Tanh", A_TANH, 0, 0, 0},
	{"Sigmoid", A_SIGMOID, 0, 0, 0},    {"Affine", A_AFFINE, 2, 1, 0},
	{"LeakyRelu", A_LEAKY, 1, 0.01, 0}, {"ThresholdedRelu", A_THRESH, 1, 1, 0},
	{"ScaledTanh", A_STANH, 2, 1, 1},   {"HardSigmoid", A_HSIG, 2, 0.2, 0.5},
	{"Elu", A_ELU, 1, 1, 0},            {"Softsign", A_SOFTSIGN, 0, 0, 0},
	{"Softplus", A_SOFTPLUS, 0, 0, 0},
};

/* Fill acts[ndirs * nper] from the activations attribute (or the defaults,
 * repeated per direction).  Alphas and betas are taken in order by the
 * activations that have parameters. */
static bool read_acts(EvCtx *c, int ndirs, int nper, const int *defs, Act *acts)
{
	const IrAttr *a = ev_attr(c, "activations");
	int na = 0, nb = 0, ia = 0, ib = 0;
	const float *al = ev_attr_floats(c, "activation_alpha", &na);
	const float *be = ev_attr_floats(c, "activation_beta", &nb);
	if (!a || a->n == 0) {
		for (int d = 0; d < ndirs; d++)
			for (int i = 0; i < nper; i++)
				acts[d * nper + i] = (Act){defs[i], 0, 0};
		return true;
	}
	if (a->n != (size_t)(nper * ndirs))
		return ev_fail(c, "activations has %zu names, expected %d", a->n, nper * ndirs);
	for (int i = 0; i < nper * ndirs; i++) {
		size_t k, nk = sizeof act_names / sizeof *act_names;
		for (k = 0; k < nk; k++)
			if (strlen(act_names[k].name) == a->strings[i].len &&
			    !strncasecmp(act_names[k].name, (const char *)a->strings[i].data, a->strings[i].len))
				break;
		if (k == nk)
			return ev_fail(c, "unsupported activation '%.*s'", (int)a->strings[i].len,
			               (const char *)a->strings[i].data);
		Act f = {act_names[k].kind, act_names[k].a, act_names[k].b};
		if (act_names[k].nparams >= 1 && al && ia < na)
			f.a = al[ia++];
		if (act_names[k].nparams >= 2 && be && ib < nb)
			f.b = be[ib++];
		acts[i] = f;
	}
	return true;
}

enum { K_RNN, K_GRU, K_LSTM };

typedef struct Rnn {
	int kind, ngates, ndirs, layout;
	int64_t seq, batch, nin, hid;
	double clip;            /* <= 0: none */
	bool lbr, input_forget;
	Act acts[6];
	int nper;
	double *x;              /* [seq][batch][nin] */
	double *w, *r, *b, *p;  /* per direction: [G*hid][nin], [G*hid][hid], [2*G*hid], [3*hid] */
	double *h0, *c0;        /* [dirs][batch][hid] */
	int64_t *lens;          /* [batch] */
	double *y, *yh, *yc;    /* [seq][dirs][batch][hid], [dirs][batch][hid] */
} Rnn;

static double clipv(const Rnn *s, double v)
{
	if (s->clip > 0) {
		if (v > s->clip)
			return s->clip;
		if (v < -s->clip)
			return -s->clip;
	}
	return v;
}

/* dot of row a (n) with row b (n) */
static double dot(const double *a, const double *b, int64_t n)
{
	double s = 0;
	for (int64_t i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

static void run_dir(Rnn *s, int dir, bool reverse)
{
	int64_t H = s->hid, G = s->ngates, I = s->nin;
	const double *W = s->w + (size_t)dir * G * H * I, *R = s->r + (size_t)dir * G * H * H;
	const double *Wb = s->b + (size_t)dir * 2 * G * H, *Rb = Wb + G * H;
	const double *P = s->p + (size_t)dir * 3 * H;
	const Act *f = s->acts + dir * s->nper;
	double *h = nn_alloc(sizeof(double) * (size_t)(H + 1)), *cs = nn_alloc(sizeof(double) * (size_t)(H + 1));
	double *gates = nn_alloc(sizeof(double) * (size_t)(G * H + 1));
	double *hr = nn_alloc(sizeof(double) * (size_t)(H + 1));
	for (int64_t b = 0; b < s->batch; b++) {
		memcpy(h, s->h0 + (dir * s->batch + b) * H, sizeof(double) * (size_t)H);
		memcpy(cs, s->c0 + (dir * s->batch + b) * H, sizeof(double) * (size_t)H);
		int64_t len = s->lens[b];
		for (int64_t step = 0; step < len; step++) {
			int64_t t = reverse ? len - 1 - step : step;
			const double *xt = s->x + (t * s->batch + b) * I;
			for (int64_t g = 0; g < G * H; g++)
				gates[g] = dot(xt, W + g * I, I) + Wb[g];
			if (s->kind == K_RNN) {
				for (int64_t j = 0; j < H; j++)
					hr[j] = act(&f[0], clipv(s, gates[j] + dot(h, R + j * H, H) + Rb[j]));
				memcpy(h, hr, sizeof(double) * (size_t)H);
			} else if (s->kind == K_GRU) {
				/* gate order z, r, h */
				double *z = gates, *rg = gates + H, *hh = gates + 2 * H;
				for (int64_t j = 0; j < H; j++) {
					z[j] = act(&f[0], clipv(s, z[j] + dot(h, R + j * H, H) + Rb[j]));
					rg[j] = act(&f[0], clipv(s, rg[j] + dot(h, R + (H + j) * H, H) + Rb[H + j]));
				}
				for (int64_t j = 0; j < H; j++) {
					const double *rr = R + (2 * H + j) * H;
					double v;
					if (s->lbr) {
						v = hh[j] + rg[j] * (dot(h, rr, H) + Rb[2 * H + j]);
					} else {
						double acc = 0;
						for (int64_t k = 0; k < H; k++)
							acc += rg[k] * h[k] * rr[k];
						v = hh[j] + acc + Rb[2 * H + j];
					}
					hr[j] = act(&f[1], clipv(s, v));
				}
				for (int64_t j = 0; j < H; j++)
					h[j] = (1 - z[j]) * hr[j] + z[j] * h[j];
			} else {
				/* gate order i, o, f, c; peepholes i, o, f */
				double *ig = gates, *og = gates + H, *fg = gates + 2 * H, *cg = gates + 3 * H;
				for (int64_t g = 0; g < G * H; g++)
					gates[g] += dot(h, R + g * H, H) + Rb[g];
				for (int64_t j = 0; j < H; j++) {
					ig[j] = act(&f[0], clipv(s, ig[j] + P[j] * cs[j]));
					fg[j] = s->input_forget ? 1 - ig[j] : act(&f[0], clipv(s, fg[j] + P[2 * H + j] * cs[j]));
					cg[j] = act(&f[1], clipv(s, cg[j]));
					cs[j] = fg[j] * cs[j] + ig[j] * cg[j];
					og[j] = act(&f[0], clipv(s, og[j] + P[H + j] * cs[j]));
					h[j] = og[j] * act(&f[2], cs[j]);
				}
			}
			memcpy(s->y + ((t * s->ndirs + dir) * s->batch + b) * H, h, sizeof(double) * (size_t)H);
		}
		memcpy(s->yh + (dir * s->batch + b) * H, h, sizeof(double) * (size_t)H);
		memcpy(s->yc + (dir * s->batch + b) * H, cs, sizeof(double) * (size_t)H);
	}
	free(h);
	free(cs);
	free(gates);
	free(hr);
}

static double *dvec(int64_t n)
{
	double *p = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
	if (!p)
		ev_out_of_memory();
	return p;
}

/* Read tensor t (whole) into a new double array, or zeros of n if absent. */
static double *dread(const EvValue *t, int64_t n)
{
	double *p = dvec(n);
	if (t)
		for (int64_t i = 0; i < t->numel && i < n; i++)
			p[i] = ev_get_f(t, i);
	return p;
}

static bool shape_is(EvCtx *c, const EvValue *t, const char *what, int rank, const int64_t *dims)
{
	if (!t)
		return true;
	if (t->kind != EV_TENSOR || t->rank != rank)
		return ev_fail(c, "%s must have rank %d", what, rank);
	for (int i = 0; i < rank; i++)
		if (t->dims[i] != dims[i])
			return ev_fail(c, "%s dim %d is %lld, expected %lld", what, i, (long long)t->dims[i],
			               (long long)dims[i]);
	return true;
}

/* A [dirs][batch][hid] state from a tensor in the layout's order. */
static double *read_state(const Rnn *s, const EvValue *t)
{
	double *p = dvec(s->ndirs * s->batch * s->hid);
	if (!t)
		return p;
	for (int64_t d = 0; d < s->ndirs; d++)
		for (int64_t b = 0; b < s->batch; b++)
			for (int64_t j = 0; j < s->hid; j++) {
				int64_t src = s->layout ? (b * s->ndirs + d) * s->hid + j : (d * s->batch + b) * s->hid + j;
				p[(d * s->batch + b) * s->hid + j] = ev_get_f(t, src);
			}
	return p;
}

static EvValue *write_state(EvCtx *c, const Rnn *s, const double *v, int dtype)
{
	int64_t dims[3] = {s->ndirs, s->batch, s->hid};
	if (s->layout) {
		dims[0] = s->batch;
		dims[1] = s->ndirs;
	}
	EvValue *t = nn_new(c, dtype, 3, dims);
	if (!t)
		return NULL;
	for (int64_t d = 0; d < s->ndirs; d++)
		for (int64_t b = 0; b < s->batch; b++)
			for (int64_t j = 0; j < s->hid; j++) {
				int64_t dst = s->layout ? (b * s->ndirs + d) * s->hid + j : (d * s->batch + b) * s->hid + j;
				ev_set_f(t, dst, v[(d * s->batch + b) * s->hid + j]);
			}
	return t;
}

static bool run_rnn_common(EvCtx *c, int kind, EvValue **in, int nin, EvValue **out, int nout)
{
	Rnn s;
	memset(&s, 0, sizeof s);
	s.kind = kind;
	s.ngates = kind == K_RNN ? 1 : kind == K_GRU ? 3 : 4;
	s.nper = kind == K_RNN ? 1 : kind == K_GRU ? 2 : 3;
	const EvValue *x = in[0], *w = nin > 1 ? in[1] : NULL, *r = nin > 2 ? in[2] : NULL;
	const EvValue *b = nin > 3 ? in[3] : NULL, *sl = nin > 4 ? in[4] : NULL, *ih = nin > 5 ? in[5] : NULL;
	const EvValue *ic = kind == K_LSTM && nin > 6 ? in[6] : NULL, *p = kind == K_LSTM && nin > 7 ? in[7] : NULL;
	if (!x || !w || !r || x->kind != EV_TENSOR || !nn_is_float_type(x->dtype))
		return ev_fail(c, "X, W and R must be float tensors");
	if (x->rank != 3 || w->rank != 3 || r->rank != 3)
		return ev_fail(c, "X, W and R must have rank 3");
	char buf[32];
	const char *dir = ev_attr_string(c, "direction", "forward", buf, sizeof buf);
	bool bidi = !strcmp(dir, "bidirectional"), rev = !strcmp(dir, "reverse");
	if (!bidi && !rev && strcmp(dir, "forward") != 0)
		return ev_fail(c, "unknown direction '%s'", dir);
	s.ndirs = bidi ? 2 : 1;
	s.layout = c->opset >= 14 ? (int)ev_attr_int(c, "layout", 0) : 0;
	s.seq = s.layout ? x->dims[1] : x->dims[0];
	s.batch = s.layout ? x->dims[0] : x->dims[1];
	s.nin = x->dims[2];
	s.hid = ev_attr_int(c, "hidden_size", r->dims[2]);
	s.clip = ev_attr(c, "clip") ? ev_attr_float(c, "clip", 0) : 0;
	s.lbr = kind == K_GRU && ev_attr_int(c, "linear_before_reset", 0) != 0;
	s.input_forget = kind == K_LSTM && ev_attr_int(c, "input_forget", 0) != 0;
	/* the gate products below stay in range (a hostile hidden_size overflowed them) */
	int64_t GH = s.hid >= 1 && s.hid <= ((int64_t)1 << 30) ? s.ngates * s.hid : -1;
	int64_t wd[3] = {s.ndirs, GH, s.nin}, rd[3] = {s.ndirs, GH, s.hid}, bd[2] = {s.ndirs, 2 * GH};
	int64_t pd[2] = {s.ndirs, GH < 0 ? -1 : 3 * s.hid};
	int64_t hd[3] = {s.ndirs, s.batch, s.hid};
	if (s.layout) {
		hd[0] = s.batch;
		hd[1] = s.ndirs;
	}
	if (GH < 0)
		return ev_fail(c, "hidden_size %lld is out of range", (long long)s.hid);
	if (!shape_is(c, w, "W", 3, wd) || !shape_is(c, r, "R", 3, rd) || !shape_is(c, b, "B", 2, bd) ||
	    !shape_is(c, ih, "initial_h", 3, hd) || !shape_is(c, ic, "initial_c", 3, hd) || !shape_is(c, p, "P", 2, pd))
		return false;
	if (sl && (sl->kind != EV_TENSOR || sl->numel != s.batch))
		return ev_fail(c, "sequence_lens must have %lld elements", (long long)s.batch);
	static const int defs_rnn[] = {A_TANH}, defs_gru[] = {A_SIGMOID, A_TANH}, defs_lstm[] = {A_SIGMOID, A_TANH, A_TANH};
	if (!read_acts(c, s.ndirs, s.nper, kind == K_RNN ? defs_rnn : kind == K_GRU ? defs_gru : defs_lstm, s.acts))
		return false;
	s.lens = nn_alloc(sizeof(int64_t) * (size_t)(s.batch + 1));
	for (int64_t i = 0; i < s.batch; i++) {
		s.lens[i] = sl ? ev_get_i(sl, i) : s.seq;
		if (s.lens[i] < 0 || s.lens[i] > s.seq) {
			free(s.lens);
			return ev_fail(c, "sequence length %lld is out of range [0, %lld]", (long long)s.lens[i],
			               (long long)s.seq);
		}
	}
	s.x = dvec(s.seq * s.batch * s.nin);
	for (int64_t t = 0; t < s.seq; t++)
		for (int64_t bb = 0; bb < s.batch; bb++)
			for (int64_t k = 0; k < s.nin; k++)
				s.x[(t * s.batch + bb) * s.nin + k] =
				    ev_get_f(x, (s.layout ? bb * s.seq + t : t * s.batch + bb) * s.nin + k);
	s.w = dread(w, w->numel);
	s.r = dread(r, r->numel);
	s.b = dread(b, s.ndirs * 2 * GH);
	s.p = dread(p, s.ndirs * 3 * s.hid);
	s.h0 = read_state(&s, ih);
	s.c0 = read_state(&s, ic);
	s.y = dvec(s.seq * s.ndirs * s.batch * s.hid);
	s.yh = dvec(s.ndirs * s.batch * s.hid);
	s.yc = dvec(s.ndirs * s.batch * s.hid);
	for (int d = 0; d < s.ndirs; d++)
		run_dir(&s, d, rev || d == 1);
	bool ok = true;
	if (nout > 0 && nn_want_output(c, 0)) {
		int64_t yd[4] = {s.seq, s.ndirs, s.batch, s.hid};
		if (s.layout) {
			yd[0] = s.batch;
			yd[1] = s.seq;
			yd[2] = s.ndirs;
		}
		EvValue *y = nn_new(c, x->dtype, 4, yd);
		if (!y) {
			ok = false;
		} else {
			for (int64_t t = 0; t < s.seq; t++)
				for (int64_t d = 0; d < s.ndirs; d++)
					for (int64_t bb = 0; bb < s.batch; bb++)
						for (int64_t j = 0; j < s.hid; j++) {
							int64_t src = ((t * s.ndirs + d) * s.batch + bb) * s.hid + j;
							int64_t dst = s.layout ? ((bb * s.seq + t) * s.ndirs + d) * s.hid + j : src;
							ev_set_f(y, dst, s.y[src]);
						}
			out[0] = y;
		}
	}
	if (ok && nout > 1 && nn_want_output(c, 1))
		ok = (out[1] = write_state(c, &s, s.yh, x->dtype)) != NULL;
	if (ok && kind == K_LSTM && nout > 2 && nn_want_output(c, 2))
		ok = (out[2] = write_state(c, &s, s.yc, x->dtype)) != NULL;
	if (!ok)
		for (int i = 0; i < nout; i++) {
			ev_unref(out[i]);
			out[i] = NULL;
		}
	free(s.lens);
	free(s.x);
	free(s.w);
	free(s.r);
	free(s.b);
	free(s.p);
	free(s.h0);
	free(s.c0);
	free(s.y);
	free(s.yh);
	free(s.yc);
	return ok;
}

static bool run_rnn(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return run_rnn_common(c, K_RNN, in, nin, out, nout);
}

static bool run_gru(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return run_rnn_common(c, K_GRU, in, nin, out, nout);
}

static bool run_lstm(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	return run_rnn_common(c, K_LSTM, in, nin, out, nout);
}

const EvKernel ev_kernels_rnn[] = {
	EV_KERNEL(RNN, run_rnn, NN_FLOATS),
	EV_KERNEL(GRU, run_gru, NN_FLOATS),
	EV_KERNEL(LSTM, run_lstm, NN_FLOATS),
	{0},
};
