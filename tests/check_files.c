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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ir/ir.h"
#include "gen/onnx.pb-c.h"
#include "ir/outfile.h"
#include "runtime/engine/sha256.h"
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

#define NEED_GRAFT()              \
	do {                      \
		if (!cli_graft()) \
			return;   \
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

/* ---- external data end to end (issue 29) ---------------------------------------- */

/* A BERT-like model with its weights in external data, written by onnx's own
 * saver into dir/model.onnx + dir/LOCATION: three layers of MatMul by
 * Transpose(wtK) (256x256 floats, folded by optimize into wK), Add bK (256
 * floats, 1 KiB), Relu; and an initializer no node reads ("unused": optimize's DCE drops
 * it, fold keeps it).  False
 * (the test is skipped) without /usr/bin/python3 and onnx. */
static bool bertish(const char *dir, const char *location)
{
	static const char script[] =
		"import sys, numpy as np, onnx\n"
		"from onnx import helper, TensorProto, numpy_helper\n"
		"d, loc, n = sys.argv[1], sys.argv[2], 256\n"
		"rng = np.random.default_rng(29)\n"
		"inits, nodes, x = [], [], 'x'\n"
		"for i in range(3):\n"
		"    inits.append(numpy_helper.from_array((rng.standard_normal((n, n)) * 0.05).astype(np.float32), f'wt{i}'))\n"
		"    inits.append(numpy_helper.from_array(rng.standard_normal((n,)).astype(np.float32), f'b{i}'))\n"
		"    nodes += [helper.make_node('Transpose', [f'wt{i}'], [f'w{i}'], perm=[1, 0]),\n"
		"              helper.make_node('MatMul', [x, f'w{i}'], [f'h{i}']),\n"
		"              helper.make_node('Add', [f'h{i}', f'b{i}'], [f'a{i}']),\n"
		"              helper.make_node('Relu', [f'a{i}'], [f'r{i}'])]\n"
		"    x = f'r{i}'\n"
		"inits.append(numpy_helper.from_array(np.ones((n, n), np.float32), 'unused'))\n"
		"g = helper.make_graph(nodes, 'bertish', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, n])],\n"
		"                      [helper.make_tensor_value_info(x, TensorProto.FLOAT, [2, n])], inits)\n"
		"m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])\n"
		"m.ir_version = 8\n"
		"onnx.save_model(m, f'{d}/model.onnx', save_as_external_data=True, all_tensors_to_one_file=True,\n"
		"                location=loc, size_threshold=1024)\n";
	char path[600], cmd[1400], *out;
	snprintf(path, sizeof path, "%s/make.py", dir);
	ck_assert(write_file(path, script, strlen(script)));
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s %s", path, dir, location);
	int rc = run_shell(cmd, &out);
	free(out);
	unlink(path);
	if (rc != 0)
		fprintf(stderr, "note: /usr/bin/python3 with onnx not available; test skipped\n");
	return rc == 0;
}

/* The initializers of the model at path as "name@offset+length" (external,
 * at `location`) or "name:inline", space-separated in file order. */
static const char *layout(const char *path, const char *location)
{
	static char buf[2048];
	size_t n;
	uint8_t *bytes = read_file(path, &n);
	ck_assert_ptr_nonnull(bytes);
	Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, n, bytes);
	ck_assert_ptr_nonnull(mp);
	buf[0] = 0;
	for (size_t i = 0; i < mp->graph->n_initializer; i++) {
		const Onnx__TensorProto *t = mp->graph->initializer[i];
		const char *loc = NULL, *off = "0", *len = "?";
		for (size_t k = 0; k < t->n_external_data; k++) {
			const char *key = t->external_data[k]->key, *v = t->external_data[k]->value;
			if (!strcmp(key, "location"))
				loc = v;
			else if (!strcmp(key, "offset"))
				off = v;
			else if (!strcmp(key, "length"))
				len = v;
		}
		if (loc)
			ck_assert_str_eq(loc, location);
		size_t used = strlen(buf);
		snprintf(buf + used, sizeof buf - used, "%s%s%s%s%s%s", used ? " " : "", t->name, loc ? "@" : ":inline",
		         loc ? off : "", loc ? "+" : "", loc ? len : "");
	}
	onnx__model_proto__free_unpacked(mp, NULL);
	free(bytes);
	return buf;
}

static off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : -1;
}

/* ONNX Runtime (make ort-tools) runs a and b on the same inputs and agrees;
 * skipped with a note when the tools are not built. */
static void ort_agrees(const char *a, const char *b)
{
	if (access("build/ort-tools/ort-compare.mjs", R_OK) != 0 || system("node --version > /dev/null 2>&1") != 0) {
		fprintf(stderr, "note: build/ort-tools not built (make ort-tools); ONNX Runtime check skipped\n");
		return;
	}
	char cmd[2048], out[8192];
	snprintf(cmd, sizeof cmd, "node build/ort-tools/ort-compare.mjs %s %s --runs 2", a, b);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ck_assert_msg(strstr(out, "RESULT: PASS"), "%s", out);
}

START_TEST(test_ext_folded_weights_to_data_file)
{
	/* optimize into another folder: the folded weights (wK, the Transposes
	 * of wtK) go to OUT.data, not inline; the data file holds exactly what
	 * the output refers to (not wtK, not a copy of the input's file), each
	 * tensor at a 4096-aligned offset; a note names the data file; the
	 * input is untouched; graft and ONNX Runtime agree with the input */
	NEED_GRAFT();
	char *dir = temp_dir(), cmd[4096], out[8192], in[800], data[800], odir[700], opt[800], odata[800], expect[1024];
	if (!bertish(dir, "model.data")) {
		rm_rf(dir);
		free(dir);
		return;
	}
	snprintf(in, sizeof in, "%s/model.onnx", dir);
	snprintf(data, sizeof data, "%s/model.data", dir);
	snprintf(odir, sizeof odir, "%s/out", dir);
	snprintf(opt, sizeof opt, "%s/opt.onnx", odir);
	snprintf(odata, sizeof odata, "%s/opt.onnx.data", odir);
	mkdir(odir, 0777);
	char hin[65], hdata[65];
	strcpy(hin, hash(in));
	strcpy(hdata, hash(data));
	snprintf(cmd, sizeof cmd, "%s optimize %s -o %s 2>&1 >/dev/null | head -1", graft(), in, opt);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	snprintf(expect, sizeof expect, "graft: note: tensors of 1024 bytes or more written to external data '%s' "
	         "(the input model has external data)\n", odata);
	ck_assert_str_eq(out, expect);
	ck_assert_str_eq(hash(in), hin);
	ck_assert_str_eq(hash(data), hdata);
	ck_assert_str_eq(listing(dir), "model.data model.onnx out");
	ck_assert_str_eq(listing(odir), "opt.onnx opt.onnx.data");
	ck_assert_str_eq(layout(opt, "opt.onnx.data"),
	                 "b0@0+1024 b1@4096+1024 b2@8192+1024 "
	                 "w0@12288+262144 w1@274432+262144 w2@536576+262144");
	ck_assert_int_eq(file_size(odata), 536576 + 262144);
	ck_assert_int_lt(file_size(opt), 4096);
	/* w0 is wt0 transposed, as the data file holds it */
	IrModel *a = ir_load_file(in, NULL, NULL), *b = ir_load_file(opt, NULL, NULL);
	ck_assert(a && b);
	size_t na, nb;
	const float *wt = (const float *)ir_tensor_bytes(a, ir_value(a, ir_lookup(a, IR_MAIN_GRAPH, "wt0"))->tensor, &na);
	const float *w = (const float *)ir_tensor_bytes(b, ir_value(b, ir_lookup(b, IR_MAIN_GRAPH, "w0"))->tensor, &nb);
	ck_assert_uint_eq(na, 262144);
	ck_assert_uint_eq(nb, 262144);
	for (int i = 0; i < 256; i++)
		for (int j = 0; j < 256; j++)
			ck_assert(w[i * 256 + j] == wt[j * 256 + i]);
	ck_assert(ir_tensor(b, ir_value(b, ir_lookup(b, IR_MAIN_GRAPH, "w0"))->tensor)->external);
	ir_model_free(a);
	ir_model_free(b);
	snprintf(cmd, sizeof cmd, "%s compare %s %s --runs 2", graft(), in, opt);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ort_agrees(in, opt);
	rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(test_ext_overwrite_onto_itself)
{
	/* optimize --overwrite onto the input, whose data file is the one
	 * OUT.data names (model.onnx.data): the data file is replaced by a
	 * rename, never truncated while graft still reads its weights, which
	 * survive (the result computes what a copy of the input computes);
	 * nothing else is left in the folder.  Without --overwrite: refused. */
	NEED_GRAFT();
	char *dir = temp_dir(), cmd[4096], out[8192], in[800], data[800], rdir[700], ref[800], expect[2048];
	if (!bertish(dir, "model.onnx.data")) {
		rm_rf(dir);
		free(dir);
		return;
	}
	snprintf(in, sizeof in, "%s/model.onnx", dir);
	snprintf(data, sizeof data, "%s/model.onnx.data", dir);
	snprintf(rdir, sizeof rdir, "%s/ref", dir);
	snprintf(ref, sizeof ref, "%s/model.onnx", rdir);
	mkdir(rdir, 0777);
	copy_file(in, ref);
	snprintf(cmd, sizeof cmd, "%s/model.onnx.data", rdir);
	copy_file(data, cmd);
	char hin[65], hdata[65];
	strcpy(hin, hash(in));
	strcpy(hdata, hash(data));
	snprintf(cmd, sizeof cmd, "%s optimize %s -o %s", graft(), in, in);
	ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
	snprintf(expect, sizeof expect, "%s: refusing to overwrite the input model '%s' (use --overwrite to allow it)\n",
	         in, in);
	ck_assert_str_eq(out, expect);
	ck_assert_str_eq(hash(in), hin);
	ck_assert_str_eq(hash(data), hdata);
	snprintf(cmd, sizeof cmd, "%s optimize %s -o %s --overwrite", graft(), in, in);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ck_assert_str_ne(hash(in), hin);
	ck_assert_str_ne(hash(data), hdata);
	ck_assert_str_eq(listing(dir), "model.onnx model.onnx.data ref");
	ck_assert_str_eq(layout(in, "model.onnx.data"),
	                 "b0@0+1024 b1@4096+1024 b2@8192+1024 "
	                 "w0@12288+262144 w1@274432+262144 w2@536576+262144");
	ck_assert_int_eq(file_size(data), 536576 + 262144);
	snprintf(cmd, sizeof cmd, "%s compare %s %s --runs 2", graft(), ref, in);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ort_agrees(ref, in);
	/* and once more onto itself: an output of graft's keeps every offset */
	strcpy(hin, hash(in));
	strcpy(hdata, hash(data));
	snprintf(cmd, sizeof cmd, "%s roundtrip %s -o %s --overwrite", graft(), in, in);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ck_assert_str_eq(hash(in), hin);
	ck_assert_str_eq(hash(data), hdata);
	rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(test_ext_overwrite_other_data_name)
{
	/* --overwrite onto the input whose data file is model.data: the output
	 * writes model.onnx.data beside it; model.data is left as it was (the
	 * new model no longer refers to it); and optimize into the input's own
	 * folder leaves both input files as they were */
	NEED_GRAFT();
	char *dir = temp_dir(), cmd[4096], out[8192], in[800], data[800], rdir[700], ref[800], opt[800];
	if (!bertish(dir, "model.data")) {
		rm_rf(dir);
		free(dir);
		return;
	}
	snprintf(in, sizeof in, "%s/model.onnx", dir);
	snprintf(data, sizeof data, "%s/model.data", dir);
	snprintf(opt, sizeof opt, "%s/model.opt.onnx", dir);
	snprintf(rdir, sizeof rdir, "%s/ref", dir);
	snprintf(ref, sizeof ref, "%s/model.onnx", rdir);
	mkdir(rdir, 0777);
	copy_file(in, ref);
	snprintf(cmd, sizeof cmd, "%s/model.data", rdir);
	copy_file(data, cmd);
	char hin[65], hdata[65];
	strcpy(hin, hash(in));
	strcpy(hdata, hash(data));
	snprintf(cmd, sizeof cmd, "%s optimize %s -o %s", graft(), in, opt);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ck_assert_str_eq(hash(in), hin);
	ck_assert_str_eq(hash(data), hdata);
	ck_assert_str_eq(listing(dir), "model.data model.onnx model.opt.onnx model.opt.onnx.data ref");
	snprintf(cmd, sizeof cmd, "%s optimize %s -o %s --overwrite", graft(), in, in);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ck_assert_str_eq(hash(data), hdata);
	ck_assert_str_eq(listing(dir), "model.data model.onnx model.onnx.data model.opt.onnx model.opt.onnx.data ref");
	ck_assert_str_eq(layout(in, "model.onnx.data"),
	                 "b0@0+1024 b1@4096+1024 b2@8192+1024 "
	                 "w0@12288+262144 w1@274432+262144 w2@536576+262144");
	snprintf(cmd, sizeof cmd, "%s compare %s %s --runs 2", graft(), ref, in);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ort_agrees(ref, in);
	rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(test_ext_options_every_saving_command)
{
	/* --external-data and --external-data-threshold on roundtrip, optimize,
	 * convert and fold: the same options, the same help, the same errors;
	 * asked for, no note */
	NEED_GRAFT();
	static const char *const cmds[] = {"roundtrip", "optimize", "convert --opset 13", "fold"};
	char *dir = temp_dir(), cmd[2048], out[8192], o[600], odata[600];
	snprintf(o, sizeof o, "%s/o.onnx", dir);
	snprintf(odata, sizeof odata, "%s/o.onnx.data", dir);
	for (int i = 0; i < 4; i++) {
		char verb[32];
		sscanf(cmds[i], "%31s", verb);
		snprintf(cmd, sizeof cmd, "%s %s --help", graft(), verb);
		ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 0);
		ck_assert_msg(strstr(out, "  --external-data       write every tensor of 1 KiB or more to one data file,\n") &&
		              strstr(out, "  --external-data-threshold BYTES   the same, with the tensors of BYTES or more\n") &&
		              strstr(out, "  --overwrite           allow OUT to be MODEL (and OUT.data MODEL's data file)\n"),
		              "%s", out);
		snprintf(cmd, sizeof cmd, "%s %s examples/tiny_cnn.onnx -o %s --external-data-threshold 0", graft(), cmds[i], o);
		ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
		ck_assert_str_eq(out, "graft: --external-data-threshold: '0' is not a number from 1 to 9223372036854775807\n"
		                      "(run 'graft --help' for usage)\n");
		ck_assert_str_eq(listing(dir), "");
		/* asked for: no note; conv1.w (864 B), conv2.w (2304 B), fc.w (320 B)
		 * are over 256 bytes (optimize and fold may have folded them) */
		snprintf(cmd, sizeof cmd, "%s %s examples/tiny_cnn.onnx -o %s --external-data-threshold 256 2>&1 | grep -c note",
		         graft(), cmds[i], o);
		run_cmd(cmd, out, sizeof out);
		ck_assert_str_eq(out, "0\n");
		ck_assert_str_eq(listing(dir), "o.onnx o.onnx.data");
		if (i == 0)
			ck_assert_int_eq(file_size(odata), 2 * 4096 + 320);
		/* plain --external-data: 1 KiB or more, conv2.w alone */
		snprintf(cmd, sizeof cmd, "%s %s examples/tiny_cnn.onnx -o %s --external-data", graft(), cmds[i], o);
		ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
		ck_assert_int_eq(file_size(odata), 2304);
		unlink(o);
		unlink(odata);
	}
	rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(test_ext_threshold_brings_small_tensors_inline)
{
	/* --external-data-threshold above the biases' 1 KiB: the input's
	 * external biases come back inline, the weights stay external */
	NEED_GRAFT();
	char *dir = temp_dir(), cmd[2048], out[8192], in[600], o[600];
	if (!bertish(dir, "model.data")) {
		rm_rf(dir);
		free(dir);
		return;
	}
	snprintf(in, sizeof in, "%s/model.onnx", dir);
	snprintf(o, sizeof o, "%s/f.onnx", dir);
	snprintf(cmd, sizeof cmd, "%s fold %s -o %s --external-data-threshold 4096", graft(), in, o);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ck_assert_str_eq(layout(o, "f.onnx.data"),
	                 "b0:inline b1:inline b2:inline unused@0+262144 w0@262144+262144 w1@524288+262144 "
	                 "w2@786432+262144");
	snprintf(cmd, sizeof cmd, "%s compare %s %s --runs 2", graft(), in, o);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ort_agrees(in, o);
	rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(test_ext_readers)
{
	/* info, print, run, compare and plan read a model with external data */
	NEED_GRAFT();
	char *dir = temp_dir(), cmd[2048], out[8192], in[600];
	if (!bertish(dir, "model.data")) {
		rm_rf(dir);
		free(dir);
		return;
	}
	snprintf(in, sizeof in, "%s/model.onnx", dir);
	snprintf(cmd, sizeof cmd, "%s info %s | sed -n '7,8p'", graft(), in);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ck_assert_str_eq(out, "initializers  7, 1051648 bytes (1.0 MiB)\n"
	                      "external      7 tensors, 1051648 bytes in 'model.data'\n");
	/* b2's first value, read from model.data */
	snprintf(cmd, sizeof cmd, "%s print %s | grep -c '^    float\\[256\\] b2 = {-0.17735042, 0.5536'", graft(), in);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ck_assert_str_eq(out, "1\n");
	snprintf(cmd, sizeof cmd, "%s run %s | head -1", graft(), in);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ck_assert_msg(!strncmp(out, "r2 ", 3) && strstr(out, " float[2,256] "), "%s", out);
	snprintf(cmd, sizeof cmd, "%s compare %s %s", graft(), in, in);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	snprintf(cmd, sizeof cmd, "%s plan %s --summary | head -1", graft(), in);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ck_assert_str_eq(out, "schedule     12 nodes in the saved order\n");
	rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(test_ext_failed_save_keeps_previous_pair)
{
	/* a save that fails while writing the data file (here: over the file
	 * size limit) leaves the previous output pair as it was, the input as
	 * it was, and no temporary file */
	NEED_GRAFT();
	char *dir = temp_dir(), cmd[2048], out[8192], in[600], data[600], opt[600], odata[600], expect[1024];
	if (!bertish(dir, "model.data")) {
		rm_rf(dir);
		free(dir);
		return;
	}
	snprintf(in, sizeof in, "%s/model.onnx", dir);
	snprintf(data, sizeof data, "%s/model.data", dir);
	snprintf(opt, sizeof opt, "%s/opt.onnx", dir);
	snprintf(odata, sizeof odata, "%s/opt.onnx.data", dir);
	snprintf(cmd, sizeof cmd, "%s roundtrip %s -o %s", graft(), in, opt);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	char h[4][65];
	strcpy(h[0], hash(in));
	strcpy(h[1], hash(data));
	strcpy(h[2], hash(opt));
	strcpy(h[3], hash(odata));
	/* 512 KiB of file at most; SIGXFSZ ignored, so write fails with EFBIG */
	snprintf(cmd, sizeof cmd, "trap '' XFSZ; ulimit -f 512; %s optimize %s -o %s 2>&1 | grep -v note", graft(), in, opt);
	run_cmd(cmd, out, sizeof out);
	snprintf(expect, sizeof expect, "%s: cannot write: File too large\n", odata);
	ck_assert_str_eq(out, expect);
	ck_assert_str_eq(hash(in), h[0]);
	ck_assert_str_eq(hash(data), h[1]);
	ck_assert_str_eq(hash(opt), h[2]);
	ck_assert_str_eq(hash(odata), h[3]);
	ck_assert_str_eq(listing(dir), "model.data model.onnx opt.onnx opt.onnx.data");
	rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(test_ext_why)
{
	/* why a save goes external: asked, the input had external data, or the
	 * inline bytes would pass the limit (2 GB; 1 KiB here) */
	IrModel *m = ir_load_file("examples/tiny_cnn.onnx", NULL, NULL);
	ck_assert_ptr_nonnull(m);
	SaveOptions so = {0};
	ck_assert_int_eq(ir_save_external_why(m, &so), EXT_WHY_NONE);
	so.inline_limit = 1024;
	ck_assert_int_eq(ir_save_external_why(m, &so), EXT_WHY_SIZE);
	so.external = EXT_ALL;
	ck_assert_int_eq(ir_save_external_why(m, &so), EXT_WHY_ASKED);
	ir_model_free(m);
	m = ir_load_file("tests/data/ext/ext.onnx", NULL, NULL);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(ir_save_external_why(m, NULL), EXT_WHY_INPUT);
	ir_model_free(m);
}
END_TEST

START_TEST(test_ext_shared_bytes_written_once)
{
	/* two initializers referring to the same bytes of the input's data file
	 * (a and b, 16 KiB each, at offset 0): OUT.data holds them once, and
	 * both refer to it */
	NEED_GRAFT();
	static const char script[] =
		"import sys, numpy as np, onnx\n"
		"from onnx import helper, TensorProto, numpy_helper\n"
		"d = sys.argv[1]\n"
		"w = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 4096\n"
		"g = helper.make_graph([helper.make_node('MatMul', ['x', 'a'], ['h']), helper.make_node('MatMul', ['h', 'b'], ['y'])],\n"
		"    'shared', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 64])],\n"
		"    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 64])],\n"
		"    [numpy_helper.from_array(w, 'a'), numpy_helper.from_array(w, 'b')])\n"
		"m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])\n"
		"m.ir_version = 8\n"
		"onnx.save_model(m, f'{d}/m.onnx', save_as_external_data=True, location='m.data')\n"
		"m = onnx.load(f'{d}/m.onnx', load_external_data=False)\n"
		"for e in m.graph.initializer[1].external_data:\n"
		"    if e.key == 'offset': e.value = '0'\n"
		"onnx.save_model(m, f'{d}/m.onnx')\n";
	char *dir = temp_dir(), cmd[4096], out[8192], path[800], o[800], odata[800];
	snprintf(path, sizeof path, "%s/make.py", dir);
	ck_assert(write_file(path, script, strlen(script)));
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s", path, dir);
	if (run_cmd(cmd, out, sizeof out) != 0) {
		fprintf(stderr, "note: /usr/bin/python3 with onnx not available; test skipped\n");
		rm_rf(dir);
		free(dir);
		return;
	}
	snprintf(path, sizeof path, "%s/m.onnx", dir);
	ck_assert_str_eq(layout(path, "m.data"), "a@0+16384 b@0+16384");
	snprintf(o, sizeof o, "%s/r.onnx", dir);
	snprintf(odata, sizeof odata, "%s/r.onnx.data", dir);
	snprintf(cmd, sizeof cmd, "%s roundtrip %s -o %s", graft(), path, o);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ck_assert_str_eq(layout(o, "r.onnx.data"), "a@0+16384 b@0+16384");
	ck_assert_int_eq(file_size(odata), 16384);
	snprintf(cmd, sizeof cmd, "%s compare %s %s --exact", graft(), path, o);
	ck_assert_msg(run_cmd(cmd, out, sizeof out) == 0, "%s", out);
	ort_agrees(path, o);
	rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(test_ext_data_target_not_a_file)
{
	/* OUT.data a FIFO or a folder: refused before anything is written
	 * (exit 2, one line), the FIFO never opened */
	NEED_GRAFT();
	char *dir = temp_dir(), cmd[4096], out[8192], in[800], o[800], odata[800], expect[2048];
	if (!bertish(dir, "model.data")) {
		rm_rf(dir);
		free(dir);
		return;
	}
	snprintf(in, sizeof in, "%s/model.onnx", dir);
	snprintf(o, sizeof o, "%s/o.onnx", dir);
	snprintf(odata, sizeof odata, "%s/o.onnx.data", dir);
	ck_assert_int_eq(mkfifo(odata, 0600), 0);
	snprintf(cmd, sizeof cmd, "%s optimize %s -o %s", graft(), in, o);
	ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
	snprintf(expect, sizeof expect, "%s: refusing to write: it exists and is not a regular file (a FIFO)\n", odata);
	ck_assert_str_eq(out, expect);
	ck_assert_str_eq(listing(dir), "model.data model.onnx o.onnx.data");
	unlink(odata);
	ck_assert_int_eq(mkdir(odata, 0777), 0);
	ck_assert_int_eq(run_cmd(cmd, out, sizeof out), 2);
	snprintf(expect, sizeof expect, "%s: refusing to write: it exists and is not a regular file (a folder)\n", odata);
	ck_assert_str_eq(out, expect);
	ck_assert_str_eq(listing(dir), "model.data model.onnx o.onnx.data");
	rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(test_rename_pair_both_or_neither)
{
	/* a data file and its model committed together: when the model's
	 * target became a folder meanwhile, the data file's target keeps its
	 * old bytes too, and no temporary file is left */
	char *dir = temp_dir(), data[600], model[600], expect[900];
	snprintf(data, sizeof data, "%s/m.onnx.data", dir);
	snprintf(model, sizeof model, "%s/m.onnx", dir);
	ck_assert(write_file(data, "old", 3));
	Diag d;
	diag_init(&d, NULL);
	OutFile a, b;
	ck_assert(out_open(&a, data, &d));
	out_write(&a, "new", 3);
	ck_assert(out_finish(&a, &d));
	ck_assert(out_open(&b, model, &d));
	out_write(&b, "model", 5);
	ck_assert(out_finish(&b, &d));
	ck_assert_int_eq(mkdir(model, 0777), 0);
	ck_assert(!out_rename_pair(&a, &b, &d));
	snprintf(expect, sizeof expect, "%s: refusing to write: it exists and is not a regular file", model);
	ck_assert_str_eq(d.first, expect);
	ck_assert_str_eq(listing(dir), "m.onnx m.onnx.data");
	size_t n;
	char *text = (char *)read_file(data, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(memcmp(text, "old", 3), 0);
	free(text);
	/* and without the folder in the way, both land */
	rmdir(model);
	diag_init(&d, NULL);
	ck_assert(out_open(&a, data, &d) && out_write(&a, "new", 3) && out_finish(&a, &d));
	ck_assert(out_open(&b, model, &d) && out_write(&b, "model", 5) && out_finish(&b, &d));
	ck_assert(out_rename_pair(&a, &b, &d));
	text = (char *)read_file(data, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(memcmp(text, "new", 3), 0);
	free(text);
	ck_assert_str_eq(listing(dir), "m.onnx m.onnx.data");
	rm_rf(dir);
	free(dir);
}
END_TEST

/* ---- writing past the page cache (out_direct) -------------------------------- */

/* m saved by the writer thread past the page cache (direct_min 1: every
 * file) into dir/direct/NAME and through the cache into dir/cache/NAME
 * (the same name: a model names its data file): the same bytes, data file
 * too.  Returns the direct copy's path (static). */
static const char *save_both_ways(IrModel *m, const char *dir, const char *name, SaveOptions opt)
{
	static char a[700], b[700];
	Diag d;
	diag_init(&d, NULL);
	snprintf(a, sizeof a, "%s/cache", dir);
	snprintf(b, sizeof b, "%s/direct", dir);
	mkdir(a, 0777);
	mkdir(b, 0777);
	snprintf(a, sizeof a, "%s/cache/%s", dir, name);
	snprintf(b, sizeof b, "%s/direct/%s", dir, name);
	ck_assert_msg(ir_save_file(m, a, &opt, &d), "%s", d.first);
	opt.direct_min = 1;
	ck_assert_msg(ir_save_file(m, b, &opt, &d), "%s", d.first);
	assert_same_file(a, b);
	strcat(a, ".data");
	strcat(b, ".data");
	struct stat st;
	if (stat(a, &st) == 0 || stat(b, &st) == 0)
		assert_same_file(a, b);
	b[strlen(b) - 5] = 0;
	return b;
}

START_TEST(test_direct_save_same_bytes)
{
	/* Saved by the writer thread past the page cache (direct_min 1: every
	 * file) or through the cache: the same bytes, inline (tensors copied
	 * from the mapped input by pread) and as external data (copied from
	 * the mapped data file at offsets), and loaded back from each. */
	char *dir = temp_dir();
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = ir_load_file("tests/gpt2/gpt2_static.onnx", NULL, &d);
	ck_assert_msg(m, "%s", d.first);
	const char *direct = save_both_ways(m, dir, "inline.onnx", (SaveOptions){0});
	assert_same_file(direct, "tests/gpt2/gpt2_static.onnx"); /* unchanged: the input's bytes */
	direct = save_both_ways(m, dir, "ext.onnx", (SaveOptions){.external = EXT_ALL});
	ir_model_free(m);
	/* from external data, written again both ways */
	m = ir_load_file(direct, NULL, &d);
	ck_assert_msg(m, "%s", d.first);
	save_both_ways(m, dir, "again.onnx", (SaveOptions){0});
	ir_model_free(m);
	rm_rf(dir);
	free(dir);
}
END_TEST

START_TEST(test_direct_save_failure)
{
	/* A write the writer thread fails (the file size limit: EFBIG) is the
	 * save's error, named as any other, and leaves no file behind. */
	char *dir = temp_dir();
	char path[600];
	snprintf(path, sizeof path, "%s/o.onnx", dir);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		Diag d;
		diag_init(&d, NULL);
		IrModel *m = ir_load_file("tests/gpt2/gpt2_static.onnx", NULL, &d);
		free(dir); /* the child's copy (path has what it needs): no leak for valgrind */
		if (!m)
			_exit(10);
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit r = {.rlim_cur = 128 << 10, .rlim_max = RLIM_INFINITY};
		setrlimit(RLIMIT_FSIZE, &r);
		bool ok = ir_save_file(m, path, &(SaveOptions){.direct_min = 1}, &d);
		char expect[700];
		snprintf(expect, sizeof expect, "%s: cannot write: File too large", path);
		ir_model_free(m);
		_exit(ok ? 11 : strcmp(d.first, expect) ? 12 : 0);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	ck_assert_str_eq(listing(dir), "");
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
	tcase_add_test(tc, test_direct_save_same_bytes);
	tcase_add_test(tc, test_direct_save_failure);
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
	tc = tcase_create("external-data-end-to-end");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_ext_folded_weights_to_data_file);
	tcase_add_test(tc, test_ext_overwrite_onto_itself);
	tcase_add_test(tc, test_ext_overwrite_other_data_name);
	tcase_add_test(tc, test_ext_options_every_saving_command);
	tcase_add_test(tc, test_ext_threshold_brings_small_tensors_inline);
	tcase_add_test(tc, test_ext_readers);
	tcase_add_test(tc, test_ext_failed_save_keeps_previous_pair);
	tcase_add_test(tc, test_ext_why);
	tcase_add_test(tc, test_ext_shared_bytes_written_once);
	tcase_add_test(tc, test_ext_data_target_not_a_file);
	tcase_add_test(tc, test_rename_pair_both_or_neither);
	suite_add_tcase(s, tc);
	return s;
}
