/* misc.c - kernels that fit no other family: StringNormalizer, Einsum, Det.
 *
 * StringNormalizer changes case through the C library's wide-character
 * tables in a UTF-8 locale of its own (newlocale/uselocale, so the
 * process's locale is left alone); if no UTF-8 locale exists it handles
 * ASCII and refuses other text rather than guess.
 *
 * Einsum and Det are reductions: they accumulate in double (int64 for
 * integer Einsum) and round once to the output type; that is at least as
 * exact as accumulating in the tensor's own type, and documented here
 * because it can differ from it in the last bit. */
#include "runtime/eval/eval.h"
#include "sh_util.h"

#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>

/* ---- StringNormalizer ----------------------------------------------------------- */

enum { CASE_NONE, CASE_LOWER, CASE_UPPER };

static locale_t utf8_locale(void)
{
	static locale_t loc;
	static bool tried;
	if (!tried) {
		tried = true;
		static const char *const names[] = {"C.UTF-8", "C.utf8", "en_US.UTF-8", "en_US.utf8"};
		for (size_t i = 0; i < sizeof names / sizeof names[0] && !loc; i++)
			loc = newlocale(LC_CTYPE_MASK, names[i], (locale_t)0);
	}
	return loc;
}

static bool is_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return false;
	return true;
}

/* A malloc'd copy of s in the given case; NULL (and *bad) for text that is
 * not valid UTF-8 or that we cannot case-map. */
static char *change_case(const char *s, int how, bool *bad)
{
	*bad = false;
	if (how == CASE_NONE)
		return strdup(s);
	if (is_ascii(s)) {
		char *r = strdup(s);
		for (char *p = r; r && *p; p++)
			if (how == CASE_LOWER && *p >= 'A' && *p <= 'Z')
				*p = (char)(*p - 'A' + 'a');
			else if (how == CASE_UPPER && *p >= 'a' && *p <= 'z')
				*p = (char)(*p - 'a' + 'A');
		return r;
	}
	locale_t loc = utf8_locale();
	if (!loc) {
		*bad = true;
		return NULL;
	}
	locale_t old = uselocale(loc);
	char *r = NULL;
	size_t n = mbstowcs(NULL, s, 0);
	if (n != (size_t)-1) {
		wchar_t *w = malloc(sizeof *w * (n + 1));
		if (w) {
			mbstowcs(w, s, n + 1);
			for (size_t i = 0; i < n; i++)
				w[i] = how == CASE_LOWER ? (wchar_t)towlower_l((wint_t)w[i], loc)
				                         : (wchar_t)towupper_l((wint_t)w[i], loc);
			size_t m = wcstombs(NULL, w, 0);
			if (m != (size_t)-1 && (r = malloc(m + 1)))
				wcstombs(r, w, m + 1);
			free(w);
		}
	}
	uselocale(old);
	if (!r)
		*bad = true;
	return r;
}

static bool k_stringnormalizer(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!x || x->kind != EV_TENSOR || x->dtype != DT_STRING)
		return ev_fail(c, "StringNormalizer needs a string tensor");
	if (!(x->rank == 1 || (x->rank == 2 && x->dims[0] == 1)))
		return ev_fail(c, "StringNormalizer takes [C] or [1, C]");
	char buf[64];
	const char *act = ev_attr_string(c, "case_change_action", "NONE", buf, sizeof buf);
	int how = !strcmp(act, "LOWER") ? CASE_LOWER : !strcmp(act, "UPPER") ? CASE_UPPER : CASE_NONE;
	if (how == CASE_NONE && strcmp(act, "NONE") != 0)
		return ev_fail(c, "unknown case_change_action '%s'", act);
	const char *locale = ev_attr_string(c, "locale", "", buf, sizeof buf);
	if (*locale && strcmp(locale, "en_US") != 0 && strcmp(locale, "en_US.UTF-8") != 0 && strcmp(locale, "C") != 0)
		return ev_fail(c, "locale '%s' is not supported (only en_US)", locale);
	bool sensitive = ev_attr_int(c, "is_case_sensitive", 0) != 0;
	const IrAttr *sw = ev_attr(c, "stopwords");
	size_t nsw = sw && sw->type == ATTR_STRINGS ? sw->n : 0;
	/* stopwords compared case-insensitively are compared in lower case */
	char **stop = calloc(nsw + 1, sizeof *stop);
	char **kept = calloc((size_t)x->numel + 1, sizeof *kept);
	int64_t nk = 0;
	bool ok = false, bad;
	if (!stop || !kept) {
		ev_fail(c, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < nsw; i++) {
		char *w = strndup((const char *)sw->strings[i].data, sw->strings[i].len);
		if (!w) {
			ev_fail(c, "out of memory");
			goto done;
		}
		stop[i] = sensitive ? w : change_case(w, CASE_LOWER, &bad);
		if (!sensitive)
			free(w);
		if (!stop[i]) {
			ev_fail(c, "stopword %zu cannot be case-folded (not UTF-8, or no UTF-8 locale)", i);
			goto done;
		}
	}
	for (int64_t i = 0; i < x->numel; i++) {
		const char *s = ((char *const *)x->data)[i];
		s = s ? s : "";
		char *key = sensitive ? NULL : change_case(s, CASE_LOWER, &bad);
		if (!sensitive && !key) {
			ev_fail(c, "string %lld cannot be case-folded (not UTF-8, or no UTF-8 locale)", (long long)i);
			goto done;
		}
		bool drop = false;
		for (size_t k = 0; k < nsw && !drop; k++)
			drop = !strcmp(sensitive ? s : key, stop[k]);
		free(key);
		if (drop)
			continue;
		kept[nk] = change_case(s, how, &bad);
		if (!kept[nk]) {
			ev_fail(c, "string %lld cannot be case-mapped (not UTF-8, or no UTF-8 locale)", (long long)i);
			goto done;
		}
		nk++;
	}
	/* everything filtered: one empty string, as onnxruntime does */
	int64_t n = nk ? nk : 1;
	int64_t dims[2] = {1, n};
	EvValue *o = x->rank == 1 ? sh_new(c, DT_STRING, 1, &n) : sh_new(c, DT_STRING, 2, dims);
	if (!o)
		goto done;
	for (int64_t i = 0; i < nk; i++) {
		((char **)o->data)[i] = kept[i];
		kept[i] = NULL;
	}
	sh_fill_empty_strings(o);
	out[0] = o;
	ok = true;
done:
	for (size_t i = 0; stop && i < nsw; i++)
		free(stop[i]);
	for (int64_t i = 0; kept && i < nk; i++)
		free(kept[i]);
	free(stop);
	free(kept);
	return ok;
}

/* ---- Einsum --------------------------------------------------------------------- */

/* Labels are numbered: letters 0..51 (A-Z, a-z, ASCII order), then the
 * dimensions an ellipsis stands for, 52.. (outermost first). */
#define EIN_LETTERS 52
#define EIN_MAX (EIN_LETTERS + EV_MAX_RANK)

static int letter_id(char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return 26 + ch - 'a';
	return -1;
}

/* Parse one term ("ab...c") into labels for a tensor of rank `rank`
 * (rank < 0: the output, whose ellipsis stands for nell dims). */
static bool ein_term(EvCtx *c, const char *s, const char *e, int rank, int *nell, int *labels, int *n)
{
	int explicit_ = 0, ell_at = -1;
	for (const char *p = s; p < e; p++) {
		if (*p == ' ')
			continue;
		if (*p == '.') {
			if (e - p < 3 || p[1] != '.' || p[2] != '.' || ell_at >= 0)
				return ev_fail(c, "bad ellipsis in the einsum equation");
			ell_at = explicit_;
			p += 2;
			continue;
		}
		if (letter_id(*p) < 0)
			return ev_fail(c, "bad character '%c' in the einsum equation", *p);
		explicit_++;
	}
	int ne;
	if (rank >= 0) {
		ne = rank - explicit_;
		if (ne < 0 || (ne > 0 && ell_at < 0))
			return ev_fail(c, "einsum term has %d labels for rank %d", explicit_, rank);
		if (ell_at >= 0 && ne > *nell)
			*nell = ne;
	} else {
		ne = ell_at >= 0 ? *nell : 0;
	}
	int k = 0;
	for (const char *p = s; p < e; p++) {
		if (*p == ' ')
			continue;
		if (*p == '.') {
			/* this term's ellipsis dims are the last ne of all ellipsis labels */
			for (int i = 0; i < ne; i++)
				labels[k++] = -(ne - i); /* fixed up once nell is known */
			p += 2;
			continue;
		}
		labels[k++] = letter_id(*p);
	}
	*n = k;
	return true;
}

static bool k_einsum(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	char eq[1024];
	const IrAttr *ea = ev_attr(c, "equation");
	if (!ea || ea->type != ATTR_STRING || ea->s.len >= sizeof eq)
		return ev_fail(c, "Einsum needs an equation");
	if (ea->s.len)
		memcpy(eq, ea->s.data, ea->s.len);
	eq[ea->s.len] = 0;
	if (nin < 1 || nin > 64)
		return ev_fail(c, "Einsum takes 1 to 64 inputs");
	int dt = in[0] ? in[0]->dtype : 0;
	for (int i = 0; i < nin; i++) {
		if (!in[i] || in[i]->kind != EV_TENSOR || in[i]->dtype != dt)
			return ev_fail(c, "Einsum inputs must be tensors of one type");
	}
	if (dt == DT_STRING || !(SH_T_NUM & SH_BIT(dt)))
		return ev_fail(c, "Einsum on %s is not supported", dtype_name(dt));
	const char *arrow = strstr(eq, "->");
	const char *lhs_end = arrow ? arrow : eq + strlen(eq);
	int labels[64][EV_MAX_RANK], nl[64], nell = 0;
	const char *s = eq;
	for (int i = 0; i < nin; i++) {
		const char *e = memchr(s, ',', (size_t)(lhs_end - s));
		if (!e)
			e = lhs_end;
		if ((e == lhs_end) != (i == nin - 1))
			return ev_fail(c, "the einsum equation has a different number of terms than inputs");
		if (!ein_term(c, s, e, in[i]->rank, &nell, labels[i], &nl[i]))
			return false;
		s = e + 1;
	}
	/* ellipsis labels: -(k) means the k-th from the end */
	for (int i = 0; i < nin; i++)
		for (int k = 0; k < nl[i]; k++)
			if (labels[i][k] < 0)
				labels[i][k] = EIN_LETTERS + nell + labels[i][k];
	int64_t size[EIN_MAX];
	int count[EIN_MAX] = {0};
	for (int l = 0; l < EIN_MAX; l++)
		size[l] = -1;
	for (int i = 0; i < nin; i++)
		for (int k = 0; k < nl[i]; k++) {
			int l = labels[i][k];
			int64_t d = in[i]->dims[k];
			count[l]++;
			if (size[l] < 0 || size[l] == 1)
				size[l] = d;
			else if (d != size[l] && d != 1) /* size 1 broadcasts, as numpy's einsum allows */
				return ev_fail(c, "einsum label sizes disagree (%lld vs %lld)", (long long)d, (long long)size[l]);
		}
	int olab[EIN_MAX], no = 0;
	if (arrow) {
		int tmp[EIN_MAX];
		const char *os = arrow + 2;
		if (!ein_term(c, os, os + strlen(os), -1, &nell, tmp, &no))
			return false;
		if (no > EV_MAX_RANK)
			return ev_fail(c, "einsum output rank too large");
		for (int k = 0; k < no; k++) {
			olab[k] = tmp[k] < 0 ? EIN_LETTERS + nell + tmp[k] : tmp[k];
			if (size[olab[k]] < 0)
				return ev_fail(c, "einsum output label does not appear in the inputs");
			for (int j = 0; j < k; j++)
				if (olab[j] == olab[k])
					return ev_fail(c, "einsum output label repeats");
		}
	} else { /* implicit: the ellipsis, then labels seen once, in ASCII order */
		for (int l = EIN_LETTERS; l < EIN_LETTERS + nell; l++)
			olab[no++] = l;
		for (int l = 0; l < EIN_LETTERS; l++)
			if (count[l] == 1)
				olab[no++] = l;
	}
	/* every label: output ones first, then the summed ones */
	int all[EIN_MAX], na = 0;
	bool is_out[EIN_MAX] = {false};
	for (int k = 0; k < no; k++) {
		all[na++] = olab[k];
		is_out[olab[k]] = true;
	}
	for (int l = 0; l < EIN_MAX; l++)
		if (size[l] >= 0 && !is_out[l])
			all[na++] = l;
	/* per input, the stride each label steps (repeated labels add up: diagonals) */
	int64_t (*st)[EIN_MAX] = calloc((size_t)nin, sizeof *st);
	if (!st)
		return ev_fail(c, "out of memory");
	for (int i = 0; i < nin; i++) {
		int64_t xs[EV_MAX_RANK];
		ev_strides(in[i]->rank, in[i]->dims, xs);
		for (int k = 0; k < nl[i]; k++)
			if (in[i]->dims[k] != 1 || size[labels[i][k]] == 1)
				st[i][labels[i][k]] += xs[k];
	}
	int64_t odims[EV_MAX_RANK];
	for (int k = 0; k < no; k++)
		odims[k] = size[olab[k]];
	EvValue *o = sh_new(c, dt, no, odims);
	if (!o) {
		free(st);
		return false;
	}
	int64_t nsum = 1;
	for (int k = no; k < na; k++)
		nsum *= size[all[k]];
	bool fl = ev_is_float(dt);
	int64_t idx[EIN_MAX] = {0}, off[64];
	for (int64_t oi = 0; oi < o->numel; oi++) {
		double accf = 0;
		uint64_t acci = 0;
		for (int k = no; k < na; k++)
			idx[k] = 0;
		for (int64_t si = 0; si < nsum; si++) {
			for (int i = 0; i < nin; i++) {
				off[i] = 0;
				for (int k = 0; k < na; k++)
					off[i] += idx[k] * st[i][all[k]];
			}
			if (fl) {
				double p = 1;
				for (int i = 0; i < nin; i++)
					p *= ev_get_f(in[i], off[i]);
				accf += p;
			} else {
				uint64_t p = 1;
				for (int i = 0; i < nin; i++)
					p *= (uint64_t)ev_get_i(in[i], off[i]);
				acci += p;
			}
			for (int k = na - 1; k >= no; k--) {
				if (++idx[k] < size[all[k]])
					break;
				idx[k] = 0;
			}
		}
		if (fl)
			ev_set_f(o, oi, accf);
		else
			ev_set_i(o, oi, (int64_t)acci);
		for (int k = no - 1; k >= 0; k--) {
			if (++idx[k] < size[all[k]])
				break;
			idx[k] = 0;
		}
	}
	free(st);
	out[0] = o;
	return true;
}

/* ---- Det -------------------------------------------------------------------------- */

static bool k_det(EvCtx *c, EvValue **in, int nin, EvValue **out, int nout)
{
	EvValue *x = in[0];
	if (!x || x->kind != EV_TENSOR || !(SH_T_FLOAT & SH_BIT(x->dtype)))
		return ev_fail(c, "Det needs a float tensor");
	int r = x->rank;
	if (r < 2 || x->dims[r - 1] != x->dims[r - 2])
		return ev_fail(c, "Det needs square matrices in the last two dimensions");
	int64_t n = x->dims[r - 1];
	EvValue *o = sh_new(c, x->dtype, r - 2, x->dims);
	if (!o)
		return false;
	double *a = malloc(sizeof *a * (size_t)(n > 0 ? n * n : 1));
	if (!a) {
		ev_unref(o);
		return ev_fail(c, "out of memory");
	}
	for (int64_t m = 0; m < o->numel; m++) {
		for (int64_t i = 0; i < n * n; i++)
			a[i] = ev_get_f(x, m * n * n + i);
		/* LU with partial pivoting; det = sign * prod(diagonal) */
		double det = 1;
		for (int64_t k = 0; k < n && det != 0; k++) {
			int64_t p = k;
			for (int64_t i = k + 1; i < n; i++)
				if (fabs(a[i * n + k]) > fabs(a[p * n + k]))
					p = i;
			if (a[p * n + k] == 0) {
				det = 0;
				break;
			}
			if (p != k) {
				for (int64_t j = 0; j < n; j++) {
					double t = a[k * n + j];
					a[k * n + j] = a[p * n + j];
					a[p * n + j] = t;
				}
				det = -det;
			}
			det *= a[k * n + k];
			for (int64_t i = k + 1; i < n; i++) {
				double f = a[i * n + k] / a[k * n + k];
				for (int64_t j = k + 1; j < n; j++)
					a[i * n + j] -= f * a[k * n + j];
			}
		}
		ev_set_f(o, m, det);
	}
	free(a);
	out[0] = o;
	return true;
}

const EvKernel ev_kernels_misc[] = {
	EV_KERNEL(StringNormalizer, k_stringnormalizer, SH_BIT(DT_STRING)),
	EV_KERNEL(Einsum, k_einsum, SH_T_NUM),
	EV_KERNEL(Det, k_det, SH_T_FLOAT),
	{0},
};
