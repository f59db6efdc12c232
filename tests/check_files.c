/* check_files.c - what graft may write (issue 24): the outputs named and
 * nothing else.  Each test makes its own files in a temporary folder (models,
 * external data, victims, FIFOs, symlinks, device nodes), runs the graft
 * binary (env GRAFT) or the library, and checks the exit status, the exact
 * message and the state of every file afterwards (SHA-256 of the inputs and
 * victims, modes, file types, no temporary files left). */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ir.h"
#include "onnx.pb-c.h"
#include "outfile.h"
#include "sha256.h"
#include "testutil.h"

/* ---- helpers -------------------------------------------------------------- */

/* run_shell with the output copied into out (truncated to size). */
static int run_cmd(const char *cmd, char *out, size_t size)
{
	char *all;
	int rc = run_shell(cmd, &all);
	snprintf(out, size, "%s", all);
	free(all);
	return rc;
}

/* SHA-256 of a file as hex, or "(none)" if it cannot be read. */
static const char *hash(const char *path)
{
	static char hex[8][65];
	static int next;
	char *h = hex[next++ % 8];
	size_t n;
	uint8_t *data = read_file(path, &n);
	if (!data)
		return strcpy(h, "(none)");
	Sha256 s;
	uint8_t dg[32];
	sha256_init(&s);
	sha256_update(&s, data, n);
	sha256_final(&s, dg);
	free(data);
	for (int i = 0; i < 32; i++)
		sprintf(h + 2 * i, "%02x", dg[i]);
	return h;
}

static const char *graft(void)
{
	return getenv("GRAFT");
}

#define NEED_GRAFT()                                                          \
	do {                                                                  \
		if (!graft()) {                                               \
			fprintf(stderr, "note: GRAFT not set; CLI test skipped\n"); \
			return;                                               \
		}                                                             \
	} while (0)

static void copy_file(const char *from, const char *to)
{
	size_t n;
	uint8_t *data = read_file(from, &n);
	ck_assert_msg(data != NULL, "cannot read %s", from);
	ck_assert(write_file(to, data, n));
	free(data);
}

/* tests/data/ext/ext.onnx (MatMul by w, Add b; w and b in weights.bin) as
 * dir/name, its external data at `location` (folders made as needed). */
static void ext_model(const char *dir, const char *name, const char *location)
{
	size_t n;
	uint8_t *bytes = read_file("tests/data/ext/ext.onnx", &n);
	ck_assert_ptr_nonnull(bytes);
	Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, n, bytes);
	ck_assert_ptr_nonnull(mp);
	char *was[16] = {0};
	for (size_t i = 0; i < mp->graph->n_initializer && i < 16; i++) {
		Onnx__TensorProto *t = mp->graph->initializer[i];
		for (size_t k = 0; k < t->n_external_data; k++)
			if (!strcmp(t->external_data[k]->key, "location")) {
				was[i] = t->external_data[k]->value;
				t->external_data[k]->value = (char *)location;
			}
	}
	size_t len = onnx__model_proto__get_packed_size(mp);
	uint8_t *out = malloc(len);
	onnx__model_proto__pack(mp, out);
	for (size_t i = 0; i < mp->graph->n_initializer && i < 16; i++) /* theirs to free */
		for (size_t k = 0; k < mp->graph->initializer[i]->n_external_data; k++)
			if (!strcmp(mp->graph->initializer[i]->external_data[k]->key, "location"))
				mp->graph->initializer[i]->external_data[k]->value = was[i];
	onnx__model_proto__free_unpacked(mp, NULL);
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	ck_assert(write_file(path, out, len));
	free(out);
	free(bytes);
	/* the data file, and the folders on its way */
	snprintf(path, sizeof path, "%s/%s", dir, location);
	for (char *s = path + strlen(dir) + 1; (s = strchr(s, '/')); s++) {
		*s = 0;
		mkdir(path, 0777);
		*s = '/';
	}
	copy_file("tests/data/ext/weights.bin", path);
}

/* The names in dir, sorted, joined by spaces. */
static const char *listing(const char *dir)
{
	static char buf[4096];
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	buf[0] = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..")) {
			if (buf[0])
				strcat(buf, " ");
			strncat(buf, names[i]->d_name, sizeof buf - strlen(buf) - 2);
		}
		free(names[i]);
	}
	free(names);
	return buf;
}

/* ---- external data ------------------------------------------------------------ */

START_TEST(test_optimize_beside_external_data)
{
	/* The everyday case: model.onnx + model.data optimized into its own
	 * folder.  The input's files are untouched; the output's data is
	 * OUT.data; both compute the same. */
	NEED_GRAFT();
	char *dir = temp_dir(), cmd[2048], out[8192], in[600], data[600], opt[600];
	ext_model(dir, "model.onnx", "model.data");
	snprintf(in, sizeof in, "%s/model.onnx", dir);
	snprintf(data, sizeof data, "%s/model.data", dir);
	snprintf(opt, sizeof opt, "%s/model.opt.onnx", dir);
	char hin[65], hdata[65];
	strcpy(hin, hash(in));
	strcpy(hdata, hash(data));
	snprintf(cmd, sizeof cmd, "%s optimize %s -o %s", graft(), in, opt);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ck_assert_str_eq(hash(in), hin);
	ck_assert_str_eq(hash(data), hdata);
	ck_assert_str_eq(listing(dir), "model.data model.onnx model.opt.onnx model.opt.onnx.data");
	snprintf(cmd, sizeof cmd, "%s compare %s %s --runs 2", graft(), in, opt);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	/* again, over the previous output: the pair is replaced together */
	snprintf(cmd, sizeof cmd, "%s optimize %s -o %s", graft(), in, opt);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ck_assert_str_eq(hash(data), hdata);
	ck_assert_str_eq(listing(dir), "model.data model.onnx model.opt.onnx model.opt.onnx.data");
	rm_rf(dir);
	free(dir);
}
END_TEST

/* A node of the input that does not fit its schema is the input's, not
 * graft's: written as it came, from a binary model or from ONNX's textual
 * syntax alike (save_model's last check once blamed graft for text-loaded
 * nodes). */
START_TEST(test_input_misfit_written_as_is)
{
	NEED_GRAFT();
	char *dir = temp_dir(), cmd[4096], out[8192], in[600], opt[600], txt[600];
	snprintf(in, sizeof in, "%s/m.onnxtxt", dir);
	snprintf(opt, sizeof opt, "%s/o.onnx", dir);
	snprintf(txt, sizeof txt, "%s/o.onnxtxt", dir);
	const char *text = "<ir_version: 8, opset_import: [\"\" : 13]>\n"
	                   "g (float[2] x) => (float[2] y) {\n  y = Relu <alpha: float = 2.0> (x)\n}\n";
	ck_assert(write_file(in, text, strlen(text)));
	snprintf(cmd, sizeof cmd, "%s roundtrip %s -o %s && %s roundtrip %s -o %s", graft(), in, opt, graft(), opt, txt);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	size_t len;
	char *back = (char *)read_file(txt, &len);
	ck_assert_msg(back && strstr(back, "y = Relu <alpha: float = 2.0> (x)"), "%s", back ? back : "(none)");
	free(back);
	rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(test_output_is_input_data)
{
	/* -o naming the input's own data file, or an output whose data file
	 * would be the input's: refused, exit 2, nothing written */
	NEED_GRAFT();
	char *dir = temp_dir(), cmd[2048], out[8192], in[600], data[600], expect[2048];
	ext_model(dir, "m.onnx", "m.onnx.data");
	snprintf(in, sizeof in, "%s/m.onnx", dir);
	snprintf(data, sizeof data, "%s/m.onnx.data", dir);
	char hin[65], hdata[65];
	strcpy(hin, hash(in));
	strcpy(hdata, hash(data));
	snprintf(cmd, sizeof cmd, "%s optimize %s -o %s", graft(), in, data);
	ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
	snprintf(expect, sizeof expect, "%s: refusing to write: it is the same file as the input model's external data '%s'\n",
	         data, data);
	ck_assert_str_eq(out, expect);
	/* --overwrite is for -o = MODEL only */
	snprintf(cmd, sizeof cmd, "%s optimize %s -o %s --overwrite", graft(), in, data);
	ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
	ck_assert_str_eq(out, expect);
	/* -o MODEL with --overwrite replaces the model and its data together */
	ck_assert_str_eq(hash(in), hin);
	ck_assert_str_eq(hash(data), hdata);
	ck_assert_str_eq(listing(dir), "m.onnx m.onnx.data");
	snprintf(cmd, sizeof cmd, "%s optimize %s -o %s --overwrite", graft(), in, in);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ck_assert_str_eq(listing(dir), "m.onnx m.onnx.data");
	IrModel *m = ir_load_file(in, NULL, NULL);
	ck_assert_ptr_nonnull(m);
	ir_model_free(m);
	rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(test_unrelated_data_file_kept)
{
	/* -o x.onnx --external-data where x.onnx.data exists and x.onnx does
	 * not refer to it: someone's file, refused and kept */
	NEED_GRAFT();
	char *dir = temp_dir(), cmd[2048], out[8192], x[600], xdata[600], expect[2048];
	snprintf(x, sizeof x, "%s/x.onnx", dir);
	snprintf(xdata, sizeof xdata, "%s/x.onnx.data", dir);
	ck_assert(write_file(xdata, "precious", 8));
	snprintf(cmd, sizeof cmd, "%s roundtrip examples/tiny_cnn.onnx -o %s --external-data", graft(), x);
	ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 1);
	snprintf(expect, sizeof expect, "%s: refusing to replace it: it exists and is not the external data of '%s' "
	         "(remove it or choose another output name)\n", xdata, x);
	ck_assert_str_eq(out, expect);
	ck_assert_str_eq(listing(dir), "x.onnx.data");
	size_t n;
	char *text = (char *)read_file(xdata, &n);
	ck_assert_uint_eq(n, 8);
	ck_assert_int_eq(memcmp(text, "precious", 8), 0);
	free(text);
	/* a symlink there is refused too, before anything is written */
	unlink(xdata);
	char victim[600];
	snprintf(victim, sizeof victim, "%s/victim", dir);
	ck_assert(write_file(victim, "precious", 8));
	ck_assert_int_eq(symlink(victim, xdata), 0);
	ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
	snprintf(expect, sizeof expect, "%s: refusing to write: it exists and is not a regular file (a symbolic link)\n",
	         xdata);
	ck_assert_str_eq(out, expect);
	text = (char *)read_file(victim, &n);
	ck_assert_uint_eq(n, 8);
	ck_assert_int_eq(memcmp(text, "precious", 8), 0);
	free(text);
	unlink(victim);
	/* without it in the way, and then over its own previous output */
	unlink(xdata);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ck_assert_str_eq(listing(dir), "x.onnx x.onnx.data");
	rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(test_crafted_locations_not_reused)
{
	/* A model whose data sits at '.ssh/authorized_keys' and one whose
	 * data is under a folder that, in the output folder, is a symlink:
	 * the output's data goes to OUT.data and nothing else is written. */
	NEED_GRAFT();
	char *dir = temp_dir(), cmd[4096], out[8192], path[800], victim[800], elsewhere[800], link[800];
	char in[600], odir[600];
	snprintf(in, sizeof in, "%s/in", dir);
	snprintf(odir, sizeof odir, "%s/out", dir);
	mkdir(in, 0777);
	mkdir(odir, 0777);
	ext_model(in, "a.onnx", ".ssh/authorized_keys");
	ext_model(in, "b.onnx", "sub/w.bin");
	/* the victims in the output folder */
	snprintf(path, sizeof path, "%s/.ssh", odir);
	mkdir(path, 0700);
	snprintf(victim, sizeof victim, "%s/.ssh/authorized_keys", odir);
	ck_assert(write_file(victim, "ssh-ed25519 AAAA me\n", 20));
	snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere", dir);
	mkdir(elsewhere, 0777);
	snprintf(link, sizeof link, "%s/sub", odir);
	ck_assert_int_eq(symlink(elsewhere, link), 0);
	char hv[65];
	strcpy(hv, hash(victim));
	snprintf(cmd, sizeof cmd, "%s optimize %s/a.onnx -o %s/a.onnx && %s roundtrip %s/b.onnx -o %s/b.onnx",
	         graft(), in, odir, graft(), in, odir);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ck_assert_str_eq(hash(victim), hv);
	ck_assert_str_eq(listing(odir), ".ssh a.onnx a.onnx.data b.onnx b.onnx.data sub");
	ck_assert_str_eq(listing(elsewhere), "");
	snprintf(path, sizeof path, "%s/.ssh", odir);
	ck_assert_str_eq(listing(path), "authorized_keys");
	rm_rf(dir);
	free(dir);
}
END_TEST

/* ---- outputs that are inputs or each other ---------------------------------------- */

START_TEST(test_report_dot_collisions)
{
	NEED_GRAFT();
	char *dir = temp_dir(), cmd[2048], out[8192], in[600], o[600], expect[2048];
	snprintf(in, sizeof in, "%s/m.onnx", dir);
	snprintf(o, sizeof o, "%s/o.onnx", dir);
	copy_file("examples/tiny_cnn.onnx", in);
	char hin[65];
	strcpy(hin, hash(in));
	struct {
		const char *flags, *path, *what;
	} cases[] = {
		{"--report", in, "refusing to overwrite the input model '%s' (use --overwrite to allow it)"},
		{"--dot", in, "refusing to overwrite the input model '%s' (use --overwrite to allow it)"},
		{"--report", o, "refusing to write: it is the same file as the output '%s'"},
		{"--dot", o, "refusing to write: it is the same file as the output '%s'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		snprintf(cmd, sizeof cmd, "%s optimize %s -o %s %s %s", graft(), in, o, cases[i].flags, cases[i].path);
		ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
		char what[1200];
		snprintf(what, sizeof what, cases[i].what, cases[i].path);
		snprintf(expect, sizeof expect, "%s: %s\n", cases[i].path, what);
		ck_assert_str_eq(out, expect);
		ck_assert_str_eq(hash(in), hin);
		ck_assert_str_eq(listing(dir), "m.onnx");
	}
	/* --report and --dot naming one file, the second spelt differently */
	snprintf(cmd, sizeof cmd, "cd %s && %s optimize m.onnx -o o.onnx --report r.json --dot ./r.json", dir, graft());
	ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
	ck_assert_str_eq(out, "./r.json: refusing to write: it is the same file as the output 'r.json'\n");
	/* a rules file is an input too */
	snprintf(cmd, sizeof cmd, "cd %s && cp %s/rules/basic/identity.rules i.rules && %s optimize m.onnx -o i.rules "
	         "--no-library --rules i.rules", dir, getenv("PWD") ? getenv("PWD") : ".", graft());
	ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
	ck_assert_str_eq(out, "i.rules: refusing to write: it is the same file as the input 'i.rules'\n");
	ck_assert_str_eq(listing(dir), "i.rules m.onnx");
	rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(test_run_output_over_inputs)
{
	/* graft run -o DIR where DIR holds the --inputs it reads */
	NEED_GRAFT();
	char *dir = temp_dir(), cmd[2048], out[8192], in[800];
	snprintf(cmd, sizeof cmd, "%s run examples/tiny_cnn.onnx -o %s/d", graft(), dir);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	snprintf(in, sizeof in, "%s/d/input_0.pb", dir);
	char h[65];
	strcpy(h, hash(in));
	snprintf(cmd, sizeof cmd, "%s run examples/tiny_cnn.onnx --inputs %s/d --seed 7 -o %s/d", graft(), dir, dir);
	ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
	ck_assert_ptr_nonnull(strstr(out, "input_0.pb: refusing to write: it is the same file as the input"));
	ck_assert_str_eq(hash(in), h);
	rm_rf(dir);
	free(dir);
}
END_TEST

/* ---- targets that are not regular files --------------------------------------------- */

START_TEST(test_output_not_a_regular_file)
{
	NEED_GRAFT();
	char *dir = temp_dir(), cmd[2048], out[8192], fifo[600], link[600], target[600], dev[600], expect[1200];
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);
	snprintf(link, sizeof link, "%s/link.onnx", dir);
	snprintf(target, sizeof target, "%s/target", dir);
	snprintf(dev, sizeof dev, "%s/null", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert(write_file(target, "keep", 4));
	ck_assert_int_eq(symlink(target, link), 0);
	/* a character device like /dev/null, made here (only root may) */
	bool have_dev = mknod(dev, S_IFCHR | 0666, makedev(1, 3)) == 0;
	struct {
		const char *path, *kind;
	} cases[] = {{fifo, "a FIFO"}, {link, "a symbolic link"}, {dir, "a folder"}, {dev, "a device"}};
	for (size_t i = 0; i < 4; i++) {
		if (i == 3 && !have_dev)
			break;
		const char *flags[] = {"-o %s", "-o %s/o.onnx --report %s", "-o %s/o.onnx --dot %s"};
		for (int f = 0; f < 3; f++) {
			char fl[1400];
			if (f == 0)
				snprintf(fl, sizeof fl, flags[0], cases[i].path);
			else
				snprintf(fl, sizeof fl, flags[f], dir, cases[i].path);
			snprintf(cmd, sizeof cmd, "timeout 20 %s optimize examples/tiny_cnn.onnx %s", graft(), fl);
			ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
			snprintf(expect, sizeof expect, "%s: refusing to write: it exists and is not a regular file (%s)\n",
			         cases[i].path, cases[i].kind);
			ck_assert_str_eq(out, expect);
		}
	}
	struct stat st;
	ck_assert_int_eq(lstat(fifo, &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	if (have_dev) {
		ck_assert_int_eq(lstat(dev, &st), 0);
		ck_assert(S_ISCHR(st.st_mode));
		ck_assert_uint_eq(st.st_rdev, makedev(1, 3));
	}
	size_t n;
	char *keep = (char *)read_file(target, &n);
	ck_assert_uint_eq(n, 4);
	free(keep);
	ck_assert_str_eq(listing(dir), have_dev ? "fifo link.onnx null target" : "fifo link.onnx target");
	rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(test_replaced_file_keeps_mode)
{
	NEED_GRAFT();
	char *dir = temp_dir(), cmd[2048], out[8192], o[600], r[600];
	snprintf(o, sizeof o, "%s/o.onnx", dir);
	snprintf(r, sizeof r, "%s/r.json", dir);
	ck_assert(write_file(o, "old", 3));
	ck_assert(write_file(r, "old", 3));
	chmod(o, 0600);
	chmod(r, 0640);
	snprintf(cmd, sizeof cmd, "umask 022 && %s optimize examples/tiny_cnn.onnx -o %s --report %s", graft(), o, r);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	struct stat st;
	ck_assert_int_eq(stat(o, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_uint_gt(st.st_size, 3);
	ck_assert_int_eq(stat(r, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	/* a new file gets 0666 less the umask */
	snprintf(cmd, sizeof cmd, "umask 027 && %s roundtrip examples/tiny_cnn.onnx -o %s/new.onnx", graft(), dir);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	snprintf(o, sizeof o, "%s/new.onnx", dir);
	ck_assert_int_eq(stat(o, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	ck_assert_str_eq(listing(dir), "new.onnx o.onnx r.json");
	rm_rf(dir);
	free(dir);
}
END_TEST

/* ---- the writer itself ---------------------------------------------------------------- */

START_TEST(test_signal_removes_temp_file)
{
	/* SIGTERM (and SIGINT, SIGHUP) while an output is half written: the
	 * process dies of the signal and no temporary file is left */
	int sigs[] = {SIGTERM, SIGINT, SIGHUP};
	for (int i = 0; i < 3; i++) {
		char *dir = temp_dir(), path[600];
		snprintf(path, sizeof path, "%s/big.onnx", dir);
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			free(dir); /* the child's copy (path has what it needs): no leak for valgrind */
			signal(sigs[i], SIG_DFL);
			out_catch_signals();
			OutFile o;
			Diag d;
			diag_init(&d, NULL);
			if (!out_open(&o, path, &d))
				_exit(10);
			static char chunk[1 << 16];
			for (int k = 0; k < 64; k++)
				out_write(&o, chunk, sizeof chunk);
			raise(sigs[i]);
			_exit(11);
		}
		int st;
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert(WIFSIGNALED(st));
		ck_assert_int_eq(WTERMSIG(st), sigs[i]);
		ck_assert_str_eq(listing(dir), "");
		rm_rf(dir);
		free(dir);
	}
}
END_TEST

START_TEST(test_failed_write_leaves_nothing)
{
	/* an output into a folder that does not exist, and a commit whose
	 * target became a folder meanwhile: errors, no file left behind */
	char *dir = temp_dir(), path[600];
	Diag d;
	diag_init(&d, NULL);
	snprintf(path, sizeof path, "%s/no/such/o.onnx", dir);
	ck_assert(!out_write_file(path, "x", 1, &d));
	char expect[900];
	snprintf(expect, sizeof expect, "%s: cannot write: No such file or directory", path);
	ck_assert_str_eq(d.first, expect);
	snprintf(path, sizeof path, "%s/o", dir);
	OutFile o;
	ck_assert(out_open(&o, path, &d));
	out_write(&o, "abc", 3);
	ck_assert_int_eq(mkdir(path, 0777), 0);
	diag_init(&d, NULL);
	ck_assert(!out_commit(&o, &d));
	snprintf(expect, sizeof expect, "%s: refusing to write: it exists and is not a regular file", path);
	ck_assert_str_eq(d.first, expect);
	ck_assert_str_eq(listing(dir), "o");
	rm_rf(dir);
	free(dir);
}
END_TEST

Suite *suite_files(void)
{
	Suite *s = suite_create("files");
	TCase *tc = tcase_create("external-data");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_optimize_beside_external_data);
	tcase_add_test(tc, test_output_is_input_data);
	tcase_add_test(tc, test_input_misfit_written_as_is);
	tcase_add_test(tc, test_unrelated_data_file_kept);
	tcase_add_test(tc, test_crafted_locations_not_reused);
	suite_add_tcase(s, tc);
	tc = tcase_create("collisions");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_report_dot_collisions);
	tcase_add_test(tc, test_run_output_over_inputs);
	tcase_add_test(tc, test_output_not_a_regular_file);
	tcase_add_test(tc, test_replaced_file_keeps_mode);
	suite_add_tcase(s, tc);
	tc = tcase_create("writer");
	tcase_add_test(tc, test_signal_removes_temp_file);
	tcase_add_test(tc, test_failed_write_leaves_nothing);
	suite_add_tcase(s, tc);
	return s;
}
