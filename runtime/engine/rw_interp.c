/* rw_interp.c - the matcher-program interpreter (see rw_interp.h).
 *
 * Loading runs graftc's front end (dsl_parse, dsl_check), the lowering
 * (dsl_lower) and the analysis of its programs (dsl_analyse_rules) on the
 * files, resolves their externs, and fills
 * an RwRuleSet whose rule table is the one graftc would write.  Matching a
 * node walks the decision tree of its op (dsl_trees(), dsl/mtree.h: the
 * tree graftc prints as match_<Op>()), whose tests several rules share,
 * and runs the program of each rule reached, in the engine's order
 * (priority, then source order), like graftc's leaves; the first that
 * commits wins.  --match-each tries the rules in turn instead.  A program is
 * straight-line but for its commute steps: each step either binds a
 * register or checks a condition, and a failed condition (with --why,
 * after recording the step's message through rw_why_fail) goes back to
 * the innermost commute step that has not yet tried its operands the
 * other way round, and on from there: the orders are tried as the
 * generated leaves' nested loops try them.  When no order is left the
 * rule fails.  After the matching steps, the values computed before
 * building, rw_begin, the result built depth first in reading order,
 * rw_replace and rw_commit; a refused commit goes back like a failure.
 *
 * Registers live on the stack for one program; matching allocates nothing. */
#include "rw_interp.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/analyse.h"
#include "dsl/ast.h"
#include "dsl/check_internal.h"     /* "did you mean" for a misspelt [override] */
#include "dsl/mprog.h"
#include "dsl/mtree.h"

/* ---- externs --------------------------------------------------------------------- */

static void x_reciprocal_exact(Rewriter *rw, const RwReg *a, RwReg *ret) { ret->i = graft_reciprocal_exact(rw, a[0].v); }
static void x_all_greater(Rewriter *rw, const RwReg *a, RwReg *ret) { ret->i = graft_all_greater(rw, a[0].v, a[1].f); }
static void x_all_nonzero(Rewriter *rw, const RwReg *a, RwReg *ret) { ret->i = graft_all_nonzero(rw, a[0].v); }
static void x_rows_any(Rewriter *rw, const RwReg *a, RwReg *ret) { ret->i = graft_rows_any(rw, a[0].v); }
static void x_same_shape(Rewriter *rw, const RwReg *a, RwReg *ret) { ret->i = graft_same_shape(rw, a[0].v, a[1].v); }
static void x_positions(Rewriter *rw, const RwReg *a, RwReg *ret) { ret->i = graft_positions(rw, a[0].v, a[1].i); }
static void x_batch_rows_equal(Rewriter *rw, const RwReg *a, RwReg *ret) { ret->i = graft_batch_rows_equal(rw, a[0].v); }
static void x_not_constant(Rewriter *rw, const RwReg *a, RwReg *ret) { ret->i = graft_not_constant(rw, a[0].v); }
static void x_no_zeros(Rewriter *rw, const RwReg *a, RwReg *ret) { ret->i = graft_no_zeros(rw, a[0].ints); }
static void x_cast_lossless(Rewriter *rw, const RwReg *a, RwReg *ret)
{
	ret->i = graft_cast_lossless(rw, (int)a[0].i, a[1].i);
}

static RwExternDef builtin_externs[] = {
	{"graft_reciprocal_exact", "b(t)", x_reciprocal_exact},
	{"graft_all_greater", "b(tf)", x_all_greater},
	{"graft_all_nonzero", "b(t)", x_all_nonzero},
	{"graft_rows_any", "b(t)", x_rows_any},
	{"graft_same_shape", "b(vv)", x_same_shape},
	{"graft_positions", "b(ti)", x_positions},
	{"graft_batch_rows_equal", "b(t)", x_batch_rows_equal},
	{"graft_not_constant", "b(v)", x_not_constant},
	{"graft_no_zeros", "b(I)", x_no_zeros},
	{"graft_cast_lossless", "b(di)", x_cast_lossless},
};
static RwExternDef *registered;
static int nregistered;

void rw_register_extern(const char *c_name, const char *sig, RwExternFn fn)
{
	for (int i = 0; i < nregistered; i++)
		if (!strcmp(registered[i].c_name, c_name)) {
			registered[i] = (RwExternDef){c_name, sig, fn};
			return;
		}
	registered = realloc(registered, sizeof *registered * (size_t)(nregistered + 1));
	if (!registered)
		abort();
	registered[nregistered++] = (RwExternDef){c_name, sig, fn};
}

/* c_name among a compiled set's own helpers (own: NULL or up to one with
 * c_name NULL), those registered, and those libgraft ships */
static const RwExternDef *find_extern(const RwExternDef *own, const char *c_name)
{
	for (int i = 0; own && own[i].c_name; i++)
		if (!strcmp(own[i].c_name, c_name))
			return &own[i];
	for (int i = 0; i < nregistered; i++)
		if (!strcmp(registered[i].c_name, c_name))
			return &registered[i];
	for (size_t i = 0; i < sizeof builtin_externs / sizeof *builtin_externs; i++)
		if (!strcmp(builtin_externs[i].c_name, c_name))
			return &builtin_externs[i];
	return NULL;
}

/* ---- the loaded set ----------------------------------------------------------------- */

/* A test that rejects most rules before they run: input `input` of the
 * root must be output `out` of an op of kind `kind` (-1 input: none); with
 * either, input 0 or input 1 must (the operand of a commutative root).
 * Sound because every order of the operands runs the program's steps
 * unless one fails first, and one of them makes exactly this test (of the
 * input the order gives the operand). */
typedef struct Quick {
	int input, out;
	OpKind kind;
	bool either;
	bool tree;                  /* the decision tree makes the test (MTEST_OP) */
} Quick;

typedef struct RwInterp {
	MRuleSet *prog;
	Quick *quick;               /* per rule */
	RuleFile **files;
	char **texts;
	int nfiles;
	RwRule *rules;
	const RwExternDef **externs;  /* per MRuleSet.externs */
	int *by_kind;               /* rules rooted at OpKind k: order[by_kind[k] .. by_kind[k + 1]) */
	int *order;                 /* default-domain rules by root kind, then vendor ones */
	int nvendor_from;           /* where the vendor rules start in order */
	MTrees *trees;              /* the decision tree per root op (dsl/mtree.h) */
	const MRoot **tree_of_kind; /* per OpKind: its tree, or NULL */
} RwInterp;

static char *read_all(const char *path, uint32_t *len, Diag *d)
{
	int err;
	char *text = dsl_read_file(path, len, &err);
	char buf[256];
	if (!text)
		diag_error(d, path, "%s", dsl_read_strerror(err, buf, sizeof buf));
	return text;
}

static void interp_free(RwInterp *I)
{
	if (!I)
		return;
	for (int i = 0; i < I->nfiles; i++) {
		dsl_free(I->files[i]);
		free(I->texts[i]);
	}
	free(I->files);
	free(I->texts);
	free(I->quick);
	free(I->rules);
	free(I->externs);
	free(I->by_kind);
	free(I->order);
	free(I->tree_of_kind);
	dsl_lower_free(I->prog);
	free(I);
}

static Quick quick_of(const MProg *p)
{
	for (int i = 0; i < p->ninsns; i++) {
		const MInsn *x = &p->insns[i];
		if (x->kind != MI_PRODUCER || *x->domain || x->e->type != MT_VALUE)
			continue;
		for (int k = 0; k < i; k++)
			if (p->insns[k].kind == MI_INPUT && p->insns[k].reg == x->src && p->insns[k].src == 0)
				return (Quick){p->insns[k].index, x->index, (OpKind)x->op_kind, p->insns[k].swap != 0,
				               x->test == MTEST_OP};
	}
	return (Quick){-1, 0, OP_UNKNOWN, false, false};
}

void rw_rules_free(RwRuleSet *s)
{
	if (!s)
		return;
	interp_free((RwInterp *)s->interp);
	free((char *)s->name);
	free(s);
}

const MRuleSet *rw_rules_programs(const RwRuleSet *s)
{
	return s && s->interp ? ((const RwInterp *)s->interp)->prog : NULL;
}

/* Every extern the programs call must be one libgraft can call, with the
 * declared types. */
static bool resolve_externs(RwInterp *I, const RwExternDef *own, Diag *d)
{
	MRuleSet *p = I->prog;
	I->externs = calloc((size_t)p->nexterns + 1, sizeof *I->externs);
	if (!I->externs)
		abort();
	bool ok = true;
	for (int i = 0; i < p->nexterns; i++) {
		const MExtern *x = &p->externs[i];
		char sig[40];
		int k = 0;
		sig[k++] = dsl_type_letter(x->decl->ret);
		sig[k++] = '(';
		for (int j = 0; j < x->decl->nparams && k < (int)sizeof sig - 2; j++)
			sig[k++] = dsl_type_letter(x->decl->params[j]);
		sig[k++] = ')';
		sig[k] = 0;
		const RwExternDef *def = find_extern(own, x->c_name);
		if (x->decl->nparams > 8) {
			dsl_error(d, x->file, x->pos, "'%s' takes %d parameters; rules loaded at run time may call helpers of "
			          "at most 8", x->decl->name, x->decl->nparams);
			ok = false;
		} else if (!def) {
			dsl_error(d, x->file, x->pos,
			          "'%s' calls the C function '%s', which graft cannot call here: rules loaded at run time may call "
			          "only the helpers libgraft ships (graft_reciprocal_exact, graft_all_greater, graft_all_nonzero, "
			          "graft_no_zeros, graft_cast_lossless) "
			          "or ones registered with rw_register_extern",
			          x->decl->name, x->c_name);
			ok = false;
		} else if (strcmp(def->sig, sig)) {
			dsl_error(d, x->file, x->pos, "'%s' is declared with types %s, but C function '%s' has %s", x->decl->name,
			          sig, x->c_name, def->sig);
			ok = false;
		}
		I->externs[i] = def;
	}
	return ok;
}

/* The interpreter keeps a program's registers and a result's operands on
 * the stack: a rules file may not make them larger than any real rule. */
#define RULE_LIMIT 4096

static int widest_val(const MVal *v)
{
	if (!v)
		return 0;
	int w = v->nkids > v->nforms ? v->nkids : v->nforms;
	for (int i = 0; v->kids && i < v->nkids; i++) {
		int k = widest_val(v->kids[i]);
		w = k > w ? k : w;
	}
	return w;
}

static bool within_limits(const MRuleSet *p, Diag *d)
{
	for (int i = 0; i < p->nrules; i++) {
		const MRule *r = &p->rules[i];
		const MProg *g = &r->prog;
		int w = g->nregs > g->nnodes ? g->nregs : g->nnodes;
		w = g->nresults > w ? g->nresults : w;
		for (int j = 0; j < g->nresults; j++) {
			int kw = widest_val(g->results[j]);
			w = kw > w ? kw : w;
		}
		for (int j = 0; j < g->ninsns; j++)
			w = g->insns[j].nforms > w ? g->insns[j].nforms : w;
		if (w > RULE_LIMIT) {
			diag_error(d, r->file->path, "rule '%s' (line %d) is too large for graft: %d operands or steps, "
			           "the limit is %d", r->name, r->line, w, RULE_LIMIT);
			return false;
		}
	}
	return true;
}

/* Is path the file the library rule was compiled from (it names it from the
 * top of the tree: rules/basic/squeeze.rules), wherever graft runs? */
static bool same_rule_file(const char *path, const char *lib)
{
	size_t n = strlen(path), k = strlen(lib);
	return n >= k && !strcmp(path + n - k, lib) && (n == k || path[n - k - 1] == '/');
}

/* The rule named `name` of the sets others, or NULL (*set: its set). */
static const RwRule *other_rule(const RwRuleSet *const *others, int nothers, const char *name, int *set)
{
	for (int s = 0; s < nothers; s++)
		for (int k = 0; k < others[s]->nrules; k++)
			if (!strcmp(others[s]->rules[k].name, name)) {
				*set = s;
				return &others[s]->rules[k];
			}
	return NULL;
}

/* "'r' overrides no library rule", with a close name if there is one. */
static void overrides_nothing(const MRule *m, const RwRuleSet *const *others, int nothers, bool verify, Diag *d)
{
	Suggest sg;
	suggest_init(&sg, m->name);
	for (int s = 0; s < nothers; s++)
		for (int k = 0; k < others[s]->nrules; k++)
			suggest_add(&sg, others[s]->rules[k].name);
	const char *best = suggest_result(&sg);
	char msg[300];
	snprintf(msg, sizeof msg, "'%s' overrides no library rule%s%s%s", m->name, best ? " (did you mean '" : "",
	         best ? best : "", best ? "'?)" : "");
	if (verify)
		dsl_warning(d, m->file, m->rule->override_pos, "%s", msg);
	else
		dsl_error(d, m->file, m->rule->override_pos, "%s", msg);
}

bool rw_rules_name_clashes(const struct MRuleSet *p, const RwRuleSet *const *others, int nothers, bool verify, Diag *d)
{
	bool ok = true;
	for (int i = 0; i < p->nrules; i++) {
		const MRule *m = &p->rules[i];
		if (m->rule->override) {
			int set;
			if (nothers && !other_rule(others, nothers, m->name, &set)) {
				overrides_nothing(m, others, nothers, verify, d);
				ok = false;
			}
			continue;
		}
		for (int s = 0; s < nothers; s++)
			for (int k = 0; k < others[s]->nrules; k++) {
				const RwRule *o = &others[s]->rules[k];
				if (strcmp(m->name, o->name) || (verify && same_rule_file(m->file->path, o->file)))
					continue;
				char msg[600];
				snprintf(msg, sizeof msg, "rule '%s' has the name of a rule of %s (%s:%d): rename it%s", m->name,
				         others[s]->name, o->file, o->line,
				         strncmp(others[s]->name, "graft-", 6) ? "" : ", or leave the library out with --no-library");
				if (verify)
					dsl_warning(d, m->file, m->rule->pos, "%s", msg);
				else
					dsl_error(d, m->file, m->rule->pos, "%s", msg);
				ok = false;
			}
	}
	return ok;
}

/* An [override] rule without a priority of its own takes the library
 * rule's, so that it is tried where that rule was (before lowering, which
 * orders the rules by priority). */
static void inherit_priorities(RuleFile **files, int nfiles, const RwRuleSet *const *others, int nothers)
{
	for (int i = 0; i < nfiles; i++)
		for (int k = 0; files[i] && k < files[i]->nrules; k++) {
			Rule *r = files[i]->rules[k];
			int set;
			const RwRule *lib = r && r->override && !r->has_priority ? other_rule(others, nothers, r->name, &set) : NULL;
			if (lib)
				r->priority = lib->priority;
		}
}

/* Set s's loaded rule marked [override] named `name`, or NULL (RwBackEnd.override_rule). */
static const RwRule *override_rule(const RwRuleSet *s, const char *name)
{
	const RwInterp *I = s->interp;
	for (int i = 0; I && i < I->prog->nrules; i++)
		if (I->prog->rules[i].rule->override && !strcmp(I->prog->rules[i].name, name))
			return &I->rules[i];
	return NULL;
}

const RwRule *rw_rules_overrider(const RwRuleSet *const *sets, int nsets, int s, const char *name)
{
	for (int t = 0; t < nsets; t++) {
		const RwRule *o = t != s ? override_rule(sets[t], name) : NULL;
		if (o)
			return o;
	}
	return NULL;
}

/* Load the files' texts (texts[i] NULL: read paths[i]; taken over); own:
 * the C helpers of the compiled set they come from (NULL: none). */
static bool match_each(Rewriter *rw, NodeId n);

static RwRuleSet *load(const char *const *paths, char **texts, const uint32_t *lens, int npaths, const char *name,
                       const RwRuleSet *const *others, int nothers, const RwExternDef *own, Diag *d)
{
	int errors = d->nerrors;
	RwInterp *I = calloc(1, sizeof *I);
	if (!I)
		abort();
	I->files = calloc((size_t)npaths + 1, sizeof *I->files);
	I->texts = calloc((size_t)npaths + 1, sizeof *I->texts);
	if (!I->files || !I->texts)
		abort();
	for (int i = 0; i < npaths; i++) {
		uint32_t len = texts ? lens[i] : 0;
		char *text = texts ? texts[i] : read_all(paths[i], &len, d);
		if (!text)
			continue;
		I->texts[I->nfiles] = text;
		I->files[I->nfiles++] = dsl_parse(paths[i], text, len, d);
	}
	if (d->nerrors == errors)
		dsl_check(I->files, I->nfiles, d);
	if (d->nerrors == errors)
		inherit_priorities(I->files, I->nfiles, others, nothers);
	if (d->nerrors == errors)
		I->prog = dsl_lower(I->files, I->nfiles, d);
	if (d->nerrors == errors && I->prog) {
		/* the analysis reads the programs the interpreter runs */
		DslAnalysis an;
		dsl_analyse_rules(I->prog, I->files, I->nfiles, d, &an);
		dsl_analysis_free(&an);
	}
	if (d->nerrors != errors || !I->prog || !resolve_externs(I, own, d) || !rw_rules_name_clashes(I->prog, others, nothers, false, d) ||
	    !within_limits(I->prog, d)) {
		interp_free(I);
		return NULL;
	}

	/* the rule table, as graftc writes it */
	MRuleSet *p = I->prog;
	I->rules = calloc((size_t)p->nrules + 1, sizeof *I->rules);
	if (!I->rules)
		abort();
	static const RwLevel levels[] = {RW_LEVEL_BASIC, RW_LEVEL_BASIC, RW_LEVEL_EXTENDED, RW_LEVEL_LAYOUT};
	for (int i = 0; i < p->nrules; i++) {
		const MRule *m = &p->rules[i];
		I->rules[i] = (RwRule){m->name, levels[m->level], m->file->path, m->line, m->rule->doc ? m->rule->doc : "",
		                       m->rule->priority, m->opset_min, m->opset_max, m->vendor, m->root_domain,
		                       m->root_op};
	}
	I->quick = calloc((size_t)p->nrules + 1, sizeof *I->quick);
	if (!I->quick)
		abort();
	for (int i = 0; i < p->nrules; i++)
		I->quick[i] = quick_of(&p->rules[i].prog);
	/* rules by root op kind, in the engine's order */
	I->by_kind = calloc(OP_COUNT + 1, sizeof *I->by_kind);
	I->order = calloc((size_t)p->nrules + 1, sizeof *I->order);
	if (!I->by_kind || !I->order)
		abort();
	int n = 0;
	for (int k = 0; k < OP_COUNT; k++) {
		I->by_kind[k] = n;
		for (int j = 0; j < p->nrules; j++) {
			const MRule *m = &p->rules[p->order[j]];
			if (k != OP_UNKNOWN && !*m->root_domain && m->root_kind == k)
				I->order[n++] = p->order[j];
		}
	}
	I->by_kind[OP_COUNT] = n;
	I->nvendor_from = n;
	for (int j = 0; j < p->nrules; j++)
		if (*p->rules[p->order[j]].root_domain)
			I->order[n++] = p->order[j];
	/* the decision trees, by root op kind */
	I->trees = dsl_trees(p);
	I->tree_of_kind = calloc(OP_COUNT + 1, sizeof *I->tree_of_kind);
	if (!I->tree_of_kind)
		abort();
	for (int t = 0; t < I->trees->nroots; t++) {
		const MRoot *r = &I->trees->roots[t];
		if (!*r->domain && r->kind != OP_UNKNOWN)
			I->tree_of_kind[r->kind] = r;
	}

	RwRuleSet *s = calloc(1, sizeof *s);
	if (!s)
		abort();
	s->name = strdup(name);
	if (!s->name)
		abort();
	s->api_version = GRAFT_BUILDER_API_VERSION;
	s->rules = I->rules;
	s->nrules = p->nrules;
	s->match = rw_interp_match;
	s->match_each = match_each;
	s->interp = I;
	s->back_end = &rw_interpreter;
	return s;
}

RwRuleSet *rw_rules_load(const char *const *paths, int npaths, const char *name, const RwRuleSet *const *others,
                         int nothers, Diag *d)
{
	return load(paths, NULL, NULL, npaths, name, others, nothers, NULL, d);
}

RwRuleSet *rw_rules_load_text(const char *path, const char *text, uint32_t len, const char *name, Diag *d)
{
	char *copy = malloc((size_t)len + 1);
	if (!copy)
		abort();
	memcpy(copy, text, len);
	copy[len] = 0;
	return load(&path, &copy, &len, 1, name, NULL, 0, NULL, d);
}

/* ---- compiled sets, interpreted ------------------------------------------------------------ */

/* The interpreted twins loaded so far, kept for the process's life: a
 * --why or --match-each run loads the library's text once. */
static struct Twin {
	const RwRuleSet *compiled;
	RwRuleSet *loaded;
} *twins;
static int ntwins;
static pthread_mutex_t twins_lock = PTHREAD_MUTEX_INITIALIZER;

/* Load compiled set s from its sources: the same rules in the same order,
 * or NULL with the reason in why. */
static RwRuleSet *load_twin(const RwRuleSet *s, char *why, size_t size)
{
	const RwSource *files = s->sources ? s->sources->files : NULL;
	int n = 0;
	while (files && files[n].path)
		n++;
	if (!n) {
		snprintf(why, size, "it carries no rules text (regenerate it with this graftc)");
		return NULL;
	}
	const char *paths[n];
	char *texts[n];
	uint32_t lens[n];
	for (int i = 0; i < n; i++) {
		paths[i] = files[i].path;
		texts[i] = strdup(files[i].text);
		if (!texts[i])
			abort();
		lens[i] = (uint32_t)strlen(texts[i]);
	}
	Diag quiet; /* the library's analysis warnings were graftc's to show */
	diag_init(&quiet, NULL);
	RwRuleSet *t = load(paths, texts, lens, n, s->name, NULL, 0, s->sources->externs, &quiet);
	if (!t) {
		snprintf(why, size, "its rules text does not load: %s", quiet.first);
		return NULL;
	}
	bool same = t->nrules == s->nrules;
	for (int i = 0; same && i < s->nrules; i++)
		same = !strcmp(t->rules[i].name, s->rules[i].name) && !strcmp(t->rules[i].root_op, s->rules[i].root_op);
	if (!same) {
		rw_rules_free(t);
		snprintf(why, size, "its rules text has other rules than its table (regenerate it with this graftc)");
		return NULL;
	}
	return t;
}

const RwRuleSet *rw_rules_interpreted(const RwRuleSet *s, Diag *d)
{
	if (s->interp)
		return s;
	pthread_mutex_lock(&twins_lock);
	RwRuleSet *t = NULL;
	for (int i = 0; i < ntwins && !t; i++)
		if (twins[i].compiled == s)
			t = twins[i].loaded;
	char why[sizeof ((Diag *)0)->first + 100] = "";
	if (!t && (t = load_twin(s, why, sizeof why))) {
		twins = realloc(twins, sizeof *twins * (size_t)(ntwins + 1));
		if (!twins)
			abort();
		twins[ntwins++] = (struct Twin){s, t};
	}
	pthread_mutex_unlock(&twins_lock);
	if (!t)
		diag_error(d, NULL, "rule set '%s' cannot be interpreted: %s", s->name, why);
	return t;
}

const RwBackEnd rw_interpreter = {rw_rules_interpreted, rw_interp_rule, override_rule};

/* ---- expressions -------------------------------------------------------------------------- */

typedef struct Run {
	Rewriter *rw;
	const RwInterp *I;
	RwReg *r;
	bool unknown;
	bool why;
	int *orient;                /* per swap site: 0 operands in order, 1 swapped */
} Run;

static RwReg eval(Run *x, const MExpr *e);
static void eval_into(Run *x, const MExpr *e, RwReg *o);

/* A register's value as its type reads it: all of a list, the first
 * bytes of the rest (a number, a value, an operand, a string, a rest list). */
static void copy_reg(RwReg *dst, const RwReg *src, MType t)
{
	if (t == MT_INTS || t == MT_FLOATS)
		*dst = *src;
	else
		memcpy(dst, src, sizeof dst->arg);
}
_Static_assert(sizeof(RwgStr) <= sizeof(RwgArg) && sizeof(RwgRest) <= sizeof(RwgArg) && sizeof(double) <= sizeof(RwgArg) &&
                   sizeof(int64_t) <= sizeof(RwgArg) && sizeof(ValueId) <= sizeof(RwgArg),
               "copy_reg copies all but lists as the first sizeof(RwgArg) bytes");

static double as_f(MType t, const RwReg *v) { return t == MT_FLOAT ? v->f : (double)v->i; }
static int64_t as_i(MType t, const RwReg *v) { return t == MT_FLOAT ? (int64_t)v->f : v->i; }
static bool truth(MType t, const RwReg *v) { return t == MT_FLOAT ? v->f != 0 : v->i != 0; }

/* Numbers, truth values and graph values without an RwReg temporary (one
 * holds a list of RWG_MAX_INTS: copying it costs more than most steps):
 * registers, literals and operators on numbers directly, the rest
 * through eval. */
static bool num_bin(Run *x, const MExpr *e, int64_t *i, double *f);

static double num_f(Run *x, const MExpr *e)
{
	int64_t i;
	double f;
	switch (e->kind) {
	case ME_REG: return as_f(e->type, &x->r[e->reg]);
	case ME_INT: case ME_BOOL: case ME_DTYPE: return (double)e->i;
	case ME_FLOAT: return e->f;
	case ME_BIN:
		if (num_bin(x, e, &i, &f))
			return e->type == MT_FLOAT ? f : (double)i;
		break;
	default: break;
	}
	RwReg v;
	eval_into(x, e, &v);
	return as_f(e->type, &v);
}

static int64_t num_i(Run *x, const MExpr *e)
{
	int64_t i;
	double f;
	switch (e->kind) {
	case ME_REG: return as_i(e->type, &x->r[e->reg]);
	case ME_INT: case ME_BOOL: case ME_DTYPE: return e->i;
	case ME_FLOAT: return (int64_t)e->f;
	case ME_BIN:
		if (num_bin(x, e, &i, &f))
			return e->type == MT_FLOAT ? (int64_t)f : i;
		break;
	default: break;
	}
	RwReg v;
	eval_into(x, e, &v);
	return as_i(e->type, &v);
}

static bool cond(Run *x, const MExpr *e)
{
	int64_t i;
	double f;
	switch (e->kind) {
	case ME_REG: return truth(e->type, &x->r[e->reg]);
	case ME_NOT: return !cond(x, e->kids[0]);
	case ME_BIN:
		if (num_bin(x, e, &i, &f))
			return e->type == MT_FLOAT ? f != 0 : i != 0;
		break;
	default: break;
	}
	RwReg v;
	eval_into(x, e, &v);
	return truth(e->type, &v);
}

/* A value expression's ValueId. */
static ValueId val(Run *x, const MExpr *e)
{
	if (e->kind == ME_REG)
		return x->r[e->reg].v;
	RwReg v;
	eval_into(x, e, &v);
	return v.v;
}

static bool is_num(MType t)
{
	return t == MT_INT || t == MT_FLOAT || t == MT_BOOL || t == MT_DTYPE;
}

/* bin() of && || and of operators on two numbers, as bin computes them: the
 * result in *f when e is a float, else in *i; false (nothing evaluated)
 * for the rest, which bin() computes. */
static bool num_bin(Run *x, const MExpr *e, int64_t *i, double *f)
{
	const MExpr *l = e->kids[0], *r = e->kids[1];
	if (e->op == EX_AND || e->op == EX_OR) {
		if (e->type == MT_FLOAT)
			return false;
		bool a = cond(x, l);
		*i = e->op == EX_AND ? a && cond(x, r) : a || cond(x, r);
		return true;
	}
	if (!is_num(l->type) || !is_num(r->type))
		return false;
	bool fl = l->type == MT_FLOAT || r->type == MT_FLOAT;
	switch (e->op) {
	case EX_EQ: case EX_NE: case EX_LT: case EX_LE: case EX_GT: case EX_GE: {
		if (e->type == MT_FLOAT)
			return false;
		int c;
		if (fl) {
			double p = num_f(x, l), q = num_f(x, r);
			c = e->op == EX_EQ ? p == q : e->op == EX_NE ? p != q : e->op == EX_LT ? p < q : e->op == EX_LE ? p <= q
			  : e->op == EX_GT ? p > q : p >= q;
		} else {
			int64_t p = num_i(x, l), q = num_i(x, r);
			c = e->op == EX_EQ ? p == q : e->op == EX_NE ? p != q : e->op == EX_LT ? p < q : e->op == EX_LE ? p <= q
			  : e->op == EX_GT ? p > q : p >= q;
		}
		*i = c;
		return true;
	}
	case EX_DIV:
		if (e->type == MT_INT) {
			if (fl)
				return false;
			int64_t p = num_i(x, l), q = num_i(x, r);
			*i = rwg_idiv(p, q, &x->unknown);
		} else {
			if (e->type != MT_FLOAT)
				return false;
			double p = num_f(x, l), q = num_f(x, r);
			*f = p / q;
		}
		return true;
	case EX_ADD: case EX_SUB: case EX_MUL:
		if (fl != (e->type == MT_FLOAT))
			return false;
		if (fl) {
			double p = num_f(x, l), q = num_f(x, r);
			*f = e->op == EX_ADD ? p + q : e->op == EX_SUB ? p - q : p * q;
		} else {
			uint64_t p = (uint64_t)num_i(x, l), q = (uint64_t)num_i(x, r);
			*i = (int64_t)(e->op == EX_ADD ? p + q : e->op == EX_SUB ? p - q : p * q);
		}
		return true;
	default:
		return false;
	}
}

static RwgArg as_arg(Run *x, const MExpr *e)
{
	RwReg v = eval(x, e);
	return e->type == MT_ARG ? v.arg : rwg_val(v.v);
}

static double math(MMath m, double a, double b)
{
	switch (m) {
	case MM_FABS: return fabs(a);
	case MM_CEIL: return ceil(a);
	case MM_FLOOR: return floor(a);
	case MM_ERF: return erf(a);
	case MM_EXP: return exp(a);
	case MM_LOG: return log(a);
	case MM_SQRT: return sqrt(a);
	case MM_TANH: return tanh(a);
	case MM_FMAX: return fmax(a, b);
	case MM_FMIN: return fmin(a, b);
	case MM_POW: return pow(a, b);
	case MM_RECIPROCAL: return 1.0 / a;
	case MM_SIGMOID: return 1.0 / (1.0 + exp(-a));
	case MM_NEG: return -a;
	case MM_RELU: return a > 0 ? a : 0;
	}
	return 0;
}

static void bin_into(Run *x, const MExpr *e, RwReg *o)
{
	memset(o, 0, sizeof o->i);
	const MExpr *l = e->kids[0], *r = e->kids[1];
	if (e->op == EX_AND || e->op == EX_OR) {
		bool a = cond(x, l);
		o->i = e->op == EX_AND ? a && cond(x, r) : a || cond(x, r);
		return;
	}
	RwReg a, b;
	eval_into(x, l, &a);
	eval_into(x, r, &b);
	bool fl = l->type == MT_FLOAT || r->type == MT_FLOAT;
	switch (e->op) {
	case EX_CONCAT: o->ints = rwg_ints_concat(a.ints, b.ints, &x->unknown); return;
	case EX_EQ:
	case EX_NE: {
		bool eq;
		if (l->type == MT_STR || r->type == MT_STR)
			eq = rwg_str_eq(a.s, b.s);
		else if (l->type == MT_INTS && r->type == MT_INTS)
			eq = rwg_ints_eq(a.ints, b.ints);
		else if (l->type == MT_FLOATS || r->type == MT_FLOATS)
			eq = rwg_floats_eq(a.floats, b.floats);
		else if (fl)
			eq = as_f(l->type, &a) == as_f(r->type, &b);
		else
			eq = a.i == b.i;
		o->i = e->op == EX_EQ ? eq : !eq;
		return;
	}
	case EX_DIV:
		if (e->type == MT_INT)
			o->i = rwg_idiv(a.i, b.i, &x->unknown);
		else
			o->f = as_f(l->type, &a) / as_f(r->type, &b);
		return;
	case EX_ADD: case EX_SUB: case EX_MUL:
		if (fl) {
			double p = as_f(l->type, &a), q = as_f(r->type, &b);
			o->f = e->op == EX_ADD ? p + q : e->op == EX_SUB ? p - q : p * q;
		} else {
			uint64_t p = (uint64_t)a.i, q = (uint64_t)b.i;
			o->i = (int64_t)(e->op == EX_ADD ? p + q : e->op == EX_SUB ? p - q : p * q);
		}
		return;
	default: {
		int c;
		if (fl) {
			double p = as_f(l->type, &a), q = as_f(r->type, &b);
			c = e->op == EX_LT ? p < q : e->op == EX_LE ? p <= q : e->op == EX_GT ? p > q : p >= q;
		} else {
			c = e->op == EX_LT ? a.i < b.i : e->op == EX_LE ? a.i <= b.i : e->op == EX_GT ? a.i > b.i : a.i >= b.i;
		}
		o->i = c;
		return;
	}
	}
}

static RwReg call_extern(Run *x, int ext, const MExpr *const *args, int nargs, RwReg *built)
{
	RwReg a[8], ret;
	memset(&ret, 0, sizeof ret);
	for (int i = 0; i < nargs && i < 8; i++) {
		if (built && !args[i])
			a[i] = built[i];
		else
			a[i] = eval(x, args[i]);
	}
	x->I->externs[ext]->fn(x->rw, a, &ret);
	return ret;
}

static void eval_into(Run *x, const MExpr *e, RwReg *o)
{
	Rewriter *rw = x->rw;
	memset(o, 0, sizeof o->arg);
	bool *unk = &x->unknown;
#define K(i) (e->kids[i])
	switch (e->kind) {
	case ME_INT: case ME_BOOL: case ME_DTYPE: o->i = e->i; break;
	case ME_FLOAT: o->f = e->f; break;
	case ME_STR: o->s = rwg_str(e->s, e->slen); break;
	case ME_LIST:
		if (e->type == MT_FLOATS) {
			double v[RWG_MAX_INTS];
			for (int i = 0; i < e->nkids && i < RWG_MAX_INTS; i++)
				v[i] = num_f(x, K(i));
			o->floats = rwg_floats_lit(e->nkids, e->nkids ? v : NULL);
		} else {
			int64_t v[RWG_MAX_INTS];
			for (int i = 0; i < e->nkids && i < RWG_MAX_INTS; i++)
				v[i] = num_i(x, K(i));
			o->ints = rwg_ints_lit(e->nkids, e->nkids ? v : NULL);
		}
		break;
	case ME_REG: copy_reg(o, &x->r[e->reg], e->type); return;
	case ME_OUT: o->v = rwg_out(rw, x->r[e->reg].n, (uint32_t)e->i); break;
	case ME_RANK: o->i = rwg_rank(rw, val(x, K(0)), unk); break;
	case ME_SHAPE: o->ints = rwg_shape(rw, val(x, K(0)), unk); break;
	case ME_SAME_DIM: {
		ValueId a = val(x, K(0)), b = val(x, K(2));
		o->i = rwg_same_dim(rw, a, num_i(x, K(1)), b, num_i(x, K(3)), unk);
		break;
	}
	case ME_DIM: {
		ValueId v = val(x, K(0));
		o->i = rwg_dim(rw, v, num_i(x, K(1)), unk);
		break;
	}
	case ME_NUMEL: o->i = rwg_numel(rw, val(x, K(0)), unk); break;
	case ME_DTYPEOF: o->i = rwg_dtype_k(rw, val(x, K(0)), unk); break;
	case ME_USES: o->i = rwg_uses(rw, val(x, K(0))); break;
	case ME_SCALAR:
		o->f = e->arg ? rwg_arg_scalar(rw, x->r[e->reg].arg, unk) : rwg_scalar(rw, val(x, K(0)), unk);
		break;
	case ME_INTSOF:
		o->ints = e->arg ? rwg_arg_ints(rw, x->r[e->reg].arg, unk) : rwg_ints(rw, val(x, K(0)), unk);
		break;
	case ME_OUTPUTS: o->i = rwg_outputs(rw, x->r[e->reg].n); break;
	case ME_ABSENT: o->i = e->arg ? rwg_arg_absent(rw, x->r[e->reg].arg) : !val(x, K(0)); break;
	case ME_REST_LEN: o->i = rwg_rest_len(rw, x->r[e->reg].rest); break;
	case ME_REST_AT: o->v = rwg_rest_at(rw, x->r[e->reg].rest, num_i(x, K(0)), unk); break;
	case ME_LEN: {
		RwReg l = eval(x, K(0));
		o->i = K(0)->type == MT_FLOATS ? l.floats.n : l.ints.n;
		break;
	}
	case ME_IS_IDENTITY: o->i = rwg_is_identity(eval(x, K(0)).ints); break;
	case ME_COMPOSE: {
		RwReg q = eval(x, K(0)), p = eval(x, K(1));
		o->ints = rwg_compose(q.ints, p.ints, unk);
		break;
	}
	case ME_ONES: o->ints = rwg_ones(num_i(x, K(0)), unk); break;
	case ME_RANGE: o->ints = rwg_range(num_i(x, K(0)), unk); break;
	case ME_DIMS: {
		ValueId v = val(x, K(0));
		o->ints = rwg_dims(rw, v, eval(x, K(1)).ints, unk);
		break;
	}
	case ME_IS_FLOAT: o->i = rwg_is_float(rw, val(x, K(0)), unk); break;
	case ME_IS_INT: o->i = rwg_is_int(rw, val(x, K(0)), unk); break;
	case ME_MERGE_AXES: {
		RwReg a = eval(x, K(0)), i = eval(x, K(1));
		o->ints = rwg_merge_axes(a.ints, i.ints, num_i(x, K(2)), unk);
		break;
	}
	case ME_DISTINCT: o->i = rwg_distinct(eval(x, K(0)).ints); break;
	case ME_FINITE: o->i = rwg_finite(rw, val(x, K(0)), unk); break;
	case ME_MODERATE: o->i = rwg_moderate(rw, val(x, K(0)), unk); break;
	case ME_EVERY: {
		static const RwgCmp cmps[] = {[EX_EQ] = RWG_EQ, [EX_NE] = RWG_NE, [EX_LT] = RWG_LT,
		                              [EX_LE] = RWG_LE, [EX_GT] = RWG_GT, [EX_GE] = RWG_GE};
		RwgInts l = eval(x, K(0)).ints;
		o->i = e->i ? rwg_ints_every_k(l, cmps[e->op], num_i(x, K(1)))
		             : rwg_ints_every(l, cmps[e->op], eval(x, K(1)).ints);
		break;
	}
	case ME_ALL:
	case ME_ANY: {
		/* first to last, stopping at the first element that decides, as
		 * graftc's loop does: what the rest would find unknown is not asked */
		RwgInts l = eval(x, K(0)).ints;
		bool all = e->kind == ME_ALL, q = all;
		for (int k = 0; q == all && k < l.n; k++) {
			x->r[e->reg].i = l.v[k];
			q = cond(x, K(1));
		}
		o->i = q;
		break;
	}
	case ME_OPSET: o->i = rw_opset(rw); break;
	case ME_MATH: {
		if (e->math == MM_NEG || e->math == MM_RELU) {
			RwReg a = eval(x, K(0));
			if (e->type == MT_FLOAT)
				o->f = math(e->math, a.f, 0);
			else
				o->i = e->math == MM_NEG ? (int64_t)(0 - (uint64_t)a.i) : a.i > 0 ? a.i : 0;
			break;
		}
		double r = e->nkids == 2 ? math(e->math, num_f(x, K(0)), num_f(x, K(1))) : math(e->math, num_f(x, K(0)), 0);
		if (e->to_int)
			o->i = (int64_t)r;
		else
			o->f = r;
		break;
	}
	case ME_NOT: o->i = !cond(x, K(0)); break;
	case ME_NEG: {
		RwReg a = eval(x, K(0));
		if (e->type == MT_FLOAT)
			o->f = -as_f(K(0)->type, &a);
		else
			o->i = (int64_t)(0 - (uint64_t)a.i);
		break;
	}
	case ME_BIN: bin_into(x, e, o); return;
	case ME_INDEX: {
		RwReg l = eval(x, K(0));
		int64_t i = num_i(x, K(1));
		if (K(0)->type == MT_FLOATS)
			o->f = rwg_floats_at(l.floats, i, unk);
		else
			o->i = rwg_ints_at(l.ints, i, unk);
		break;
	}
	case ME_TO_FLOATS: o->floats = rwg_ints_to_floats(eval(x, K(0)).ints); break;
	case ME_AS_FLOAT: o->f = (double)(float)num_f(x, K(0)); break;
	case ME_EXTERN: *o = call_extern(x, e->ext, (const MExpr *const *)e->kids, e->nkids, NULL); return;
	case ME_IS_CONST:
		if (e->arg) {
			RwgArg a = x->r[e->reg].arg;
			o->i = a.attr || !a.v || rw_is_const(rw, a.v);
		} else {
			ValueId v = val(x, K(0));
			o->i = (e->i && !v) || rw_is_const(rw, v);
		}
		break;
	case ME_ABSENT_FROM: o->i = rwg_absent_from(rw, x->r[e->reg].n, (uint32_t)e->i); break;
	case ME_SAME:
		if (e->i) {
			o->i = val(x, K(0)) == val(x, K(1));
		} else if (e->arg) {
			RwgArg a = as_arg(x, K(0)), b = as_arg(x, K(1));
			o->i = rwg_arg_same(rw, a, b);
		} else {
			ValueId a = val(x, K(0)), b = val(x, K(1));
			o->i = rw_same_value(rw, a, b);
		}
		break;
	case ME_EQUALS:
		o->i = e->arg ? rwg_arg_equals(rw, x->r[e->reg].arg, e->f, e->tol)
		               : rw_const_equals(rw, val(x, K(0)), e->f, e->tol);
		break;
	case ME_EQUALS_LIST:
		o->i = e->arg ? rwg_arg_equals_list(rw, x->r[e->reg].arg, e->nnums ? e->nums : NULL, e->nnums)
		               : rwg_const_equals_list(rw, val(x, K(0)), e->nnums ? e->nums : NULL, e->nnums);
		break;
	case ME_ATTR_IS_SET: o->i = x->r[e->reg].arg.attr != NULL; break;
	case ME_FROM: {
		RwgArg a = e->arg ? x->r[e->reg].arg : rwg_val(x->r[e->reg].v);
		o->i = !a.attr && rwg_from(rw, a.v, e->domain, e->s);
		break;
	}
	}
#undef K
}

static RwReg eval(Run *x, const MExpr *e)
{
	RwReg v;
	eval_into(x, e, &v);
	return v;
}

/* ---- building ------------------------------------------------------------------------------- */

static ValueId build(Run *x, const MVal *v)
{
	Rewriter *rw = x->rw;
	switch (v->kind) {
	case MV_ABSENT: return 0;
	case MV_EXPR: return eval(x, v->e).v;
	case MV_ARG: return rwg_arg_value(rw, x->r[v->reg].arg, &x->unknown);
	case MV_SCALAR: {
		ValueId like = build(x, v->kids[0]);
		return rw_const_scalar(rw, rwg_dtype(rw, like), num_f(x, v->e));
	}
	case MV_INTS: return rwg_const_ints(rw, eval(x, v->e).ints);
	case MV_OP: {
		ValueId a = build(x, v->kids[0]);
		if (v->nkids == 1)
			return rwg_op1(rw, v->op, a);
		ValueId b = build(x, v->kids[1]);
		return rwg_op2(rw, v->op, a, b);
	}
	case MV_DEFAULT: {
		ValueId t = x->r[v->reg].v;
		return t ? t : build(x, v->kids[0]);
	}
	case MV_EXTERN: {
		RwReg built[8];
		for (int i = 0; i < v->nkids && i < 8; i++)
			if (v->kids[i])
				built[i].v = build(x, v->kids[i]);
		ValueId r = call_extern(x, v->ext, (const MExpr *const *)v->args, v->nkids, built).v;
		if (!r)
			x->unknown = true;
		return r;
	}
	case MV_NODE: {
		ValueId ins[v->nkids + 1];
		for (int i = 0; i < v->nkids; i++)
			ins[i] = build(x, v->kids[i]);
		NodeId k;
		if (v->nforms) {
			RwgArg args[v->nkids + 1];
			RwgForm forms[v->nforms];
			for (int i = 0; i < v->nkids; i++)
				args[i] = rwg_val(ins[i]);
			for (int i = 0; i < v->nforms; i++)
				forms[i] = (RwgForm){v->forms[i].input, v->forms[i].attr, v->forms[i].first, v->forms[i].last};
			k = rwg_node_forms(rw, v->op, args, (uint32_t)v->nkids, 1, forms, v->nforms, &x->unknown);
		} else if (v->outs) {
			k = rwg_node_outs(rw, v->domain, v->op, v->nkids ? ins : NULL, (uint32_t)v->nkids, v->outs);
		} else if (*v->domain) {
			k = rwg_node_in(rw, v->domain, v->op, v->nkids ? ins : NULL, (uint32_t)v->nkids, 1);
		} else {
			k = rwg_node(rw, v->op, v->nkids ? ins : NULL, (uint32_t)v->nkids, 1);
		}
		if (v->copy)
			rw_copy_attrs(rw, k, x->r[v->reg].n);
		for (int i = 0; i < v->nattrs; i++) {
			const MSetAttr *a = &v->attrs[i];
			RwReg val = eval(x, a->e);
			switch (a->type) {
			case ATTR_INT: rwg_set_int(rw, k, a->name, as_i(a->e->type, &val)); break;
			case ATTR_FLOAT: rwg_set_float(rw, k, a->name, as_f(a->e->type, &val)); break;
			case ATTR_STRING: rwg_set_str(rw, k, a->name, val.s); break;
			case ATTR_INTS: rwg_set_ints(rw, k, a->name, val.ints); break;
			case ATTR_FLOATS:
				rwg_set_floats(rw, k, a->name, a->to_floats ? rwg_ints_to_floats(val.ints) : val.floats);
				break;
			default: break;
			}
		}
		return rw_output(rw, k, 0);
	}
	}
	return 0;
}

/* ---- one program ------------------------------------------------------------------------------ */

typedef enum Outcome { FAILED, COMMIT_REFUSED, FIRED } Outcome;

static Outcome fail(Run *x, const MInsn *in, const char *arg_s, long long arg_i, bool has_i)
{
	if (!x->why)
		return FAILED;
	const char *msg = in->why;
	char swapped[512];
	if (in->swap && x->orient[in->swap - 1] && !strncmp(msg, "input ", 6)) {
		/* "input 0 (x) of Mul" of an operand the order has swapped: input 1 */
		const char *after = msg + 6;
		while (*after >= '0' && *after <= '9')
			after++;
		snprintf(swapped, sizeof swapped, "input %d%s", 1 - in->slot, after);
		msg = swapped;
	}
	if (arg_s)
		rw_why_fail(x->rw, in->step, (RwWhyKind)in->why_kind, msg, arg_s);
	else if (has_i)
		rw_why_fail(x->rw, in->step, (RwWhyKind)in->why_kind, msg, arg_i);
	else
		rw_why_fail(x->rw, in->step, (RwWhyKind)in->why_kind, msg, 0);
	return FAILED;
}

/* ---- --why of guards and result values ---------------------------------------------------------- */

_Static_assert((int)MN_SHAPE == RWG_NEED_SHAPE && (int)MN_DTYPE == RWG_NEED_DTYPE && (int)MN_SCALAR == RWG_NEED_SCALAR &&
               (int)MN_INTS == RWG_NEED_INTS && (int)MN_CONST == RWG_NEED_CONST, "MNeed is RwgNeed");

/* rwg_why_begin and the values part p shows into b. */
static void why_values(Run *x, RwgWhy *b, const MPart *p)
{
	rwg_why_begin(b, p->text);
	for (int i = 0; i < p->nshown; i++) {
		const MShown *sh = &p->shown[i];
		x->unknown = false;
		RwReg v = eval(x, sh->e);
		bool *u = &x->unknown;
		switch (sh->e->type) {
		case MT_INT: rwg_why_int(b, sh->text, v.i, u); break;
		case MT_FLOAT: rwg_why_float(b, sh->text, v.f, u); break;
		case MT_BOOL: rwg_why_bool(b, sh->text, v.i != 0, u); break;
		case MT_DTYPE: rwg_why_dtype(b, sh->text, (int)v.i, u); break;
		case MT_STR: rwg_why_str(b, sh->text, v.s, u); break;
		case MT_INTS: rwg_why_ints(b, sh->text, v.ints, u); break;
		case MT_FLOATS: rwg_why_floats(b, sh->text, v.floats, u); break;
		default: break;
		}
		if (sh->need != MN_NONE) {
			RwReg of = eval(x, sh->of);
			rwg_why_need(x->rw, b, (RwgNeed)sh->need, sh->of->type == MT_ARG ? of.arg.v : of.v, sh->of_text);
		}
	}
	x->unknown = false;
}

/* Guard `in` failed: record its first part that is false or undecided, and
 * the values it saw. */
static void why_guard(Run *x, const MInsn *in)
{
	for (int k = 0; k < in->nparts; k++) {
		const MPart *p = &in->parts[k];
		x->unknown = false;
		bool c = cond(x, p->e), undecided = in->index && x->unknown;
		if (c && !undecided)
			continue;
		RwgWhy b;
		why_values(x, &b, p);
		rwg_why_guard(x->rw, in->step, &b, undecided);
		return;
	}
}

/* A value of the result was unknown (step MI_PRE_KNOWN's `in`): record the
 * first that is, computed again in order. */
static void why_result(Run *x, const MProg *prog, const MInsn *in)
{
	for (int i = 0; i < prog->ninsns; i++) {
		const MInsn *pre = &prog->insns[i];
		if (pre->kind != MI_PRE || !pre->nparts)
			continue;
		x->unknown = false;
		eval(x, pre->parts[0].e);
		if (!x->unknown)
			continue;
		RwgWhy b;
		why_values(x, &b, &pre->parts[0]);
		rwg_why_result(x->rw, in->step, &b);
		return;
	}
}

/* Program p from step `from` on, in the orientations x->orient gives the
 * swap sites entered before; a commute step met enters its site in order:
 * at[site] = the step, unknown_at[site] = the unknown flag there. */
static Outcome run_from(Run *px, int rule, const MProg *p, NodeId root, int from, int *at, bool *unknown_at)
{
	Run x = *px;
	Rewriter *rw = x.rw;
	bool why = x.why;
	RwReg *regs = x.r;
	NodeId nodes[p->nnodes + 1];
	for (int i = from; i < p->ninsns; i++) {
		const MInsn *in = &p->insns[i];
		RwReg *dst = &regs[in->reg];
		switch (in->kind) {
		case MI_COMMUTE:
			x.orient[in->index] = 0;
			at[in->index] = i;
			unknown_at[in->index] = x.unknown;
			break;
		case MI_INPUT:
			dst->v = rw_input(rw, regs[in->src].n, (uint32_t)(in->swap ? in->index ^ x.orient[in->swap - 1] : in->index));
			break;
		case MI_ARG:
			if (in->nforms == 1) {
				dst->arg = rwg_arg(rw, regs[in->src].n, (uint32_t)in->index, in->forms[0].attr, in->forms[0].first,
				                   in->forms[0].last);
			} else {
				RwgForm forms[in->nforms];
				for (int k = 0; k < in->nforms; k++)
					forms[k] = (RwgForm){in->forms[k].input, in->forms[k].attr, in->forms[k].first, in->forms[k].last};
				dst->arg = rwg_arg_forms(rw, regs[in->src].n, (uint32_t)in->index, forms, in->nforms);
			}
			break;
		case MI_PRODUCER: {
			ValueId v = in->e->type == MT_ARG ? regs[in->src].arg.v : regs[in->src].v;
			dst->n = *in->domain ? rwg_producer_named(rw, v, in->domain, in->op, (uint32_t)in->index)
			                     : rwg_producer_op(rw, v, (OpKind)in->op_kind, (uint32_t)in->index);
			if (!dst->n)
				return fail(&x, in, why ? rwg_what(rw, v) : NULL, 0, false);
			break;
		}
		case MI_ATTR: {
			NodeId n = regs[in->src].n;
			bool ok;
			switch (in->attr_type) {
			case ATTR_INT: ok = rwg_attr_int(rw, n, in->name, &dst->i); break;
			case ATTR_FLOAT: ok = rwg_attr_float(rw, n, in->name, &dst->f); break;
			case ATTR_STRING: ok = rwg_attr_str(rw, n, in->name, &dst->s); break;
			case ATTR_INTS: ok = rwg_attr_ints(rw, n, in->name, &dst->ints); break;
			case ATTR_FLOATS: ok = rwg_attr_floats(rw, n, in->name, &dst->floats); break;
			default: ok = false;
			}
			if (!ok)
				return fail(&x, in, why ? rw_node_label(rw, n) : NULL, 0, false);
			break;
		}
		case MI_REST: dst->rest = (RwgRest){regs[in->src].n, (uint32_t)in->index}; break;
		case MI_CHECK: {
			bool c = cond(&x, in->e);
			if (in->index ? c : !c) {
				if (in->why_arg) {
					RwReg a = eval(&x, in->why_arg);
					return fail(&x, in, NULL, (long long)a.i, true);
				}
				return fail(&x, in, NULL, 0, false);
			}
			break;
		}
		case MI_SINGLE_USE: {
			for (int k = 0; k < p->nnodes; k++)
				nodes[k] = regs[p->nodes[k]].n;
			NodeId n = regs[in->src].n;
			if (!rwg_single_use_node(rw, n, nodes, p->nnodes, in->index)) {
				if (why)
					rwg_why_use(rw, in->step, n, nodes, p->nnodes, in->index, in->desc);
				return FAILED;
			}
			break;
		}
		case MI_GUARD: {
			bool c = cond(&x, in->e);
			if (!c || (in->index && x.unknown)) {
				/* the part that failed; the whole guard's text if none does */
				bool unknown = x.unknown;
				if (why)
					why_guard(&x, in);
				if (in->index)
					return fail(&x, in, unknown ? "undecided, something it needs is unknown: " : "", 0, false);
				return fail(&x, in, NULL, 0, false);
			}
			break;
		}
		case MI_PRE: *dst = eval(&x, in->e); break;
		case MI_PRE_KNOWN:
			if (x.unknown) {
				if (why)
					why_result(&x, p, in);
				return fail(&x, in, NULL, 0, false);
			}
			break;
		case MI_LIKE:
			if (!rwg_dtype(rw, val(&x, in->e)))
				return fail(&x, in, NULL, 0, false);
			break;
		}
	}
	for (int k = 0; k < p->nnodes; k++)
		nodes[k] = regs[p->nodes[k]].n;
	rw_begin(rw, rule, root, nodes, p->nnodes);
	ValueId res[p->nresults + 1];
	for (int i = 0; i < p->nresults; i++)
		res[i] = build(&x, p->results[i]);
	for (int i = 0; i < p->nresults; i++)
		rw_replace(rw, (uint32_t)(p->out0 + i), res[i]);
	for (int i = 0; i < p->nalso; i++) {
		const MAlso *a = &p->also[i];
		rw_replace_also(rw, regs[a->reg].n, (uint32_t)a->node_out,
		                rw_output(rw, rw_producer(rw, res[0]), (uint32_t)a->out));
	}
	if (p->build_step && x.unknown) {
		rw_abort(rw);
		if (why)
			rw_why_fail(rw, p->build_step, RW_WHY_UNKNOWN,
			            "building the result failed: a helper declined, or a shape, dtype or constant it needs is unknown");
		return FAILED;
	}
	return rw_commit(rw) ? FIRED : COMMIT_REFUSED;
}

/* Rule `rule`'s program p at root: the first orientation of its swap sites
 * (site 0 the slowest to change) whose match commits.  Each failure goes
 * back to the innermost site entered that is still in order, swaps it and
 * runs on from its commute step; the sites after it are entered anew. */
static Outcome run_prog(Rewriter *rw, const RwInterp *I, int rule, const MProg *p, NodeId root, bool why, int nsites)
{
	RwReg regs[p->nregs + 1];
	int orient[nsites + 1], at[nsites + 1];
	bool unknown_at[nsites + 1];
	Run x = {rw, I, regs, false, why, orient};
	regs[0].n = root;
	for (int s = 0; s < nsites; s++)
		at[s] = -1;
	int from = 0, open; /* sites entered: 0 .. open - 1 */
	for (;;) {
		Outcome o = run_from(&x, rule, p, root, from, at, unknown_at);
		if (o == FIRED)
			return o;
		for (open = nsites; open > 0 && (at[open - 1] < 0 || orient[open - 1]); open--)
			at[open - 1] = -1;
		if (!open)
			return o;
		orient[open - 1] = 1;
		from = at[open - 1] + 1;
		x.unknown = unknown_at[open - 1];
		for (int s = open; s < nsites; s++)
			at[s] = -1;
	}
}

/* ---- the engine's entry points ---------------------------------------------------------------- */

/* Does rule's one-test filter q pass at root n? */
static bool quick_holds(Rewriter *rw, const Quick *q, NodeId n)
{
	if (q->input < 0)
		return true;
	if (q->either)
		return rwg_producer_kind(rw, rw_input(rw, n, 0), (uint32_t)q->out) == q->kind ||
		       rwg_producer_kind(rw, rw_input(rw, n, 1), (uint32_t)q->out) == q->kind;
	return rwg_producer_kind(rw, rw_input(rw, n, (uint32_t)q->input), (uint32_t)q->out) == q->kind;
}

bool rw_interp_rule(Rewriter *rw, int rule, NodeId n, bool why)
{
	const RwInterp *I = rw_current_set(rw)->interp;
	if (!rw_enabled(rw, rule))
		return why && rw_why_disabled(rw, rule);
	const MRule *m = &I->prog->rules[rule];
	if (!why && !quick_holds(rw, &I->quick[rule], n))
		return false;
	/* a refused commit goes on to the next orientation, as the decision
	 * tree's leaves do; with why, the furthest step answers */
	return run_prog(rw, I, rule, &m->prog, n, why, m->nsites) == FIRED;
}

/* The rules below tree node t, in order, until one fires: a test's
 * children run when it holds, a leaf runs its rule's whole program (the
 * tests made again are cheap) behind its one-test filter (Quick), which
 * rejects most rules the tree cannot: the operand op tests of a
 * commutative root, which come after its commute step.  slots[k]: the node an op test put in slot
 * k on the way down (0 the root). */
static bool walk(Rewriter *rw, const RwInterp *I, const MTreeNode *t, NodeId *slots)
{
	for (int i = 0; i < t->nkids; i++) {
		const MTreeNode *k = t->kids[i];
		const MTreeTest *x = k->test;
		if (!x) {
			/* the rule's one-test filter, unless the tree made that test */
			const MRule *m = &I->prog->rules[k->rule];
			const Quick *q = &I->quick[k->rule];
			if (rw_enabled(rw, k->rule) && (q->tree || quick_holds(rw, q, slots[0])) &&
			    run_prog(rw, I, k->rule, &m->prog, slots[0], false, m->nsites) == FIRED)
				return true;
			continue;
		}
		NodeId n = slots[x->node];
		bool ok = false;
		switch (x->kind) {
		case MTEST_OP: {
			/* op tests of this input in a row (kids i .. end - 1) exclude
			 * each other: the producer's op once, then the test naming it */
			ValueId v = rw_input(rw, n, (uint32_t)x->index);
			OpKind op = rwg_producer_kind(rw, v, (uint32_t)x->out);
			int end = i + k->run;
			for (int j = i; j < end && !ok; j++)
				if (op != OP_UNKNOWN && op == (OpKind)t->kids[j]->test->op_kind) {
					k = t->kids[j];
					slots[k->test->slot] = rw_producer(rw, v);
					ok = true;
				}
			i = end - 1;
			break;
		}
		case MTEST_PRESENT: ok = rw_input(rw, n, (uint32_t)x->index) != 0; break;
		case MTEST_CONST: ok = rw_is_const(rw, rw_input(rw, n, (uint32_t)x->index)); break;
		case MTEST_ABSENT_FROM: ok = rwg_absent_from(rw, n, (uint32_t)x->index); break;
		case MTEST_ATTR_INT: ok = rwg_attr_int_is(rw, n, x->attr, x->value); break;
		case MTEST_NONE: break;
		}
		if (ok && walk(rw, I, k, slots))
			return true;
	}
	return false;
}

/* The set's match: the decision tree of the node's op. */
bool rw_interp_match(Rewriter *rw, NodeId n)
{
	const RwInterp *I = rw_current_set(rw)->interp;
	const IrNode *node = ir_node(rw_model(rw), n);
	const MRoot *root = NULL;
	if (node->kind != OP_UNKNOWN && !*node->domain) {
		root = I->tree_of_kind[node->kind];
	} else {
		for (int t = 0; t < I->trees->nroots && !root; t++) {
			const MRoot *r = &I->trees->roots[t];
			if (*r->domain && !strcmp(node->domain, r->domain) && !strcmp(node->op_type, r->op))
				root = r;
		}
	}
	if (!root)
		return false;
	NodeId slots[root->nslots];
	slots[0] = n;
	return walk(rw, I, root->tree, slots);
}

/* --match-each: the rules of the node's op tried in turn, each behind the
 * one op test of a root input its program makes (Quick). */
static bool match_each(Rewriter *rw, NodeId n)
{
	const RwInterp *I = rw_current_set(rw)->interp;
	const IrNode *node = ir_node(rw_model(rw), n);
	int from, to;
	if (node->kind != OP_UNKNOWN && !*node->domain) {
		from = I->by_kind[node->kind];
		to = I->by_kind[node->kind + 1];
	} else {
		from = I->nvendor_from;
		to = I->prog->nrules;
	}
	for (int i = from; i < to; i++) {
		int rule = I->order[i];
		const MRule *m = &I->prog->rules[rule];
		if (from == I->nvendor_from && (strcmp(node->domain, m->root_domain) || strcmp(node->op_type, m->root_op)))
			continue;
		if (rw_interp_rule(rw, rule, n, false))
			return true;
	}
	return false;
}
