/* outfile.c - the one place that writes files (see outfile.h): temporary file
 * beside the target, fsync, rename, fsync of the folder; the targets that may
 * not be replaced; the pending temporary files removed on a signal; and the
 * files of a run, so that no output lands on an input or another output. */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- bytes written -------------------------------------------------------- */

/* What every OutFile has written, for the CLI's progress line (read by its
 * thread: atomic). */
static _Atomic unsigned long long written;

uint64_t out_bytes_written(void)
{
	return written;
}

/* ---- pending temporary files -------------------------------------------- */

/* A fixed table, so the signal handler reads it without locks: a slot is
 * filled or cleared with the signals blocked. */
#define MAX_PENDING 64
static char *volatile pending[MAX_PENDING];

static void block_signals(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, old);
}

static void pending_set(const char *from, char *to)
{
	sigset_t old;
	block_signals(&old);
	for (int i = 0; i < MAX_PENDING; i++)
		if (pending[i] == from) {
			pending[i] = to;
			break;
		}
	sigprocmask(SIG_SETMASK, &old, NULL);
}

void out_remove_pending(void)
{
	for (int i = 0; i < MAX_PENDING; i++)
		if (pending[i])
			unlink(pending[i]);
}

static void on_signal(int sig)
{
	out_remove_pending();
	signal(sig, SIG_DFL);
	raise(sig);
}

void out_catch_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGHUP);
	int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	for (int i = 0; i < 3; i++) {
		struct sigaction was;
		/* a signal the caller's parent ignores (nohup) stays ignored */
		if (sigaction(sigs[i], NULL, &was) == 0 && was.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

/* ---- one output file ----------------------------------------------------- */

static char *folder_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	return strndup(path, (size_t)(slash - path) + (slash == path));
}

/* May path be written (replaced, or created)?  Sets *mode to the mode the
 * new file gets: the replaced file's, else 0666 less the umask. */
static bool check_target(const char *path, mode_t *mode, Diag *d)
{
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode)) {
			diag_error(d, path, "refusing to write: it exists and is not a regular file (%s)",
			           S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISDIR(st.st_mode) ? "a folder" :
			           S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISSOCK(st.st_mode) ? "a socket" : "a device");
			return false;
		}
		*mode = st.st_mode & 0777; /* not set-id bits: graft's file is not the old program */
	} else if (errno != ENOENT) {
		diag_error(d, path, "cannot write: %s", strerror(errno));
		return false;
	} else {
		mode_t mask = umask(0);
		umask(mask);
		*mode = 0666 & ~mask;
	}
	return true;
}

bool out_open(OutFile *o, const char *path, Diag *d)
{
	memset(o, 0, sizeof *o);
	o->fd = -1;
	if (!check_target(path, &o->mode, d))
		return false;
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (!*base) {
		diag_error(d, path, "cannot write: no file name");
		return false;
	}
	size_t dirlen = (size_t)(base - path);
	char *tmp = malloc(dirlen + strlen(base) + 16);
	if (!tmp) {
		diag_error(d, path, "cannot write: out of memory");
		return false;
	}
	/* ".NAME.graft-XXXXXX": hidden, in the target's folder (same file system, so
	 * the rename is atomic); mkstemp creates it with O_EXCL.  A name near the
	 * file system's limit gets ".graft-XXXXXX" alone. */
	if (strlen(base) > 200)
		sprintf(tmp, "%.*s.graft-XXXXXX", (int)dirlen, path);
	else
		sprintf(tmp, "%.*s.%s.graft-XXXXXX", (int)dirlen, path, base);
	sigset_t old;
	block_signals(&old);
	int slot = -1;
	for (int i = 0; i < MAX_PENDING && slot < 0; i++)
		if (!pending[i])
			slot = i;
	int fd = slot < 0 ? (errno = EMFILE, -1) : mkstemp(tmp);
	if (fd >= 0)
		pending[slot] = tmp;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (fd < 0) {
		diag_error(d, path, "cannot write: %s", strerror(errno));
		free(tmp);
		return false;
	}
	o->path = strdup(path);
	o->tmp = tmp;
	o->fd = fd;
	return true;
}

/* n bytes at off through descriptor fd (o->fd, or o->dfd when direct). */
static bool pwrite_all(OutFile *o, int fd, const uint8_t *p, size_t n, off_t off)
{
	while (!o->failed && n) {
		ssize_t w = pwrite(fd, p, n, off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->failed = true;
			o->err = w < 0 ? errno : ENOSPC;
			break;
		}
		p += w;
		off += w;
		n -= (size_t)w;
		written += (unsigned long long)w;
	}
	return !o->failed;
}

/* ---- direct writes -------------------------------------------------------- */

/* Direct writes must start, end and sit in memory on a multiple of the
 * device's block: 4096 covers them all.  A writer thread writes the
 * buffers in the order they were handed over, NBUF of DIRECT_BUF bytes, so
 * the caller fills (computes, copies) one while the disk takes another. */
enum { DIRECT_ALIGN = 4096, NBUF = 4 };

struct OutDirect {
	int dfd;                /* O_DIRECT on the file; -1 once refused (the thread's) */
	int fd;                 /* the page-cache descriptor: the unaligned tails */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint8_t *buf[NBUF];
	size_t len[NBUF];
	off_t off[NBUF];
	bool queued[NBUF];      /* handed over, not yet written */
	unsigned fill, drain;   /* the next buffer to fill (caller), to write (thread) */
	bool quit;
	int err;                /* the thread's first failure (errno) */
	size_t staged;          /* out_write's appends in buf[fill % NBUF] */
	off_t pos;              /* the file offset of the next append */
};

static bool aligned(const void *p, off_t off)
{
	return (uintptr_t)p % DIRECT_ALIGN == 0 && off % DIRECT_ALIGN == 0;
}

/* n bytes at off, by the writer thread: whole blocks straight to the disk,
 * the rest through the page cache.  A file system that refuses a direct
 * write (EINVAL) gets it, and every later one, through the cache.  0 or
 * an errno. */
static int direct_put(OutDirect *x, const uint8_t *p, size_t n, off_t off)
{
	while (n) {
		bool direct = x->dfd >= 0 && aligned(p, off) && n >= DIRECT_ALIGN;
		size_t k = direct ? n / DIRECT_ALIGN * DIRECT_ALIGN : n;
		ssize_t w = pwrite(direct ? x->dfd : x->fd, p, k, off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EINVAL && direct) {
			close(x->dfd);
			x->dfd = -1;
			continue;
		}
		if (w <= 0)
			return w < 0 ? errno : ENOSPC;
		p += w;
		off += w;
		n -= (size_t)w;
		written += (unsigned long long)w;
	}
	return 0;
}

static void *direct_run(void *arg)
{
	OutDirect *x = arg;
	pthread_mutex_lock(&x->mu);
	for (;;) {
		unsigned i = x->drain % NBUF;
		while (!x->queued[i] && !x->quit)
			pthread_cond_wait(&x->cv, &x->mu);
		if (!x->queued[i])
			break;
		pthread_mutex_unlock(&x->mu);
		int err = x->err ? 0 : direct_put(x, x->buf[i], x->len[i], x->off[i]);
		pthread_mutex_lock(&x->mu);
		if (err && !x->err)
			x->err = err;
		x->queued[i] = false;
		x->drain++;
		pthread_cond_broadcast(&x->cv);
	}
	pthread_mutex_unlock(&x->mu);
	return NULL;
}

void out_direct(OutFile *o)
{
	if (o->direct || o->fd < 0 || o->fp || o->failed || lseek(o->fd, 0, SEEK_CUR) != 0)
		return;
	/* the temporary file itself, reopened through its descriptor (not by
	 * name: the folder may be someone else's to change) */
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", o->fd);
	int fd = open(self, O_WRONLY | O_DIRECT | O_CLOEXEC);
	struct stat a, b;
	if (fd >= 0 && (fstat(fd, &a) != 0 || fstat(o->fd, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)) {
		close(fd);
		fd = -1;
	}
	OutDirect *x = fd >= 0 ? calloc(1, sizeof *x) : NULL;
	bool ok = x != NULL;
	for (int i = 0; ok && i < NBUF; i++)
		ok = posix_memalign((void **)&x->buf[i], DIRECT_ALIGN, DIRECT_BUF) == 0;
	if (ok) {
		x->dfd = fd;
		x->fd = o->fd;
		pthread_mutex_init(&x->mu, NULL);
		pthread_cond_init(&x->cv, NULL);
		ok = pthread_create(&x->thread, NULL, direct_run, x) == 0;
		if (!ok) {
			pthread_mutex_destroy(&x->mu);
			pthread_cond_destroy(&x->cv);
		}
	}
	if (!ok) {
		for (int i = 0; x && i < NBUF; i++)
			free(x->buf[i]);
		free(x);
		if (fd >= 0)
			close(fd);
		return;
	}
	o->direct = x;
}

/* The thread's failure, as o's. */
static bool direct_check(OutFile *o, OutDirect *x)
{
	if (x->err && !o->failed) {
		o->failed = true;
		o->err = x->err;
	}
	return !o->failed;
}

uint8_t *out_buffer(OutFile *o)
{
	OutDirect *x = o->direct;
	unsigned i = x->fill % NBUF;
	pthread_mutex_lock(&x->mu);
	while (x->queued[i])
		pthread_cond_wait(&x->cv, &x->mu);
	direct_check(o, x);
	pthread_mutex_unlock(&x->mu);
	return o->failed ? NULL : x->buf[i];
}

void out_submit(OutFile *o, size_t n, off_t off)
{
	OutDirect *x = o->direct;
	unsigned i = x->fill % NBUF;
	pthread_mutex_lock(&x->mu);
	x->len[i] = n;
	x->off[i] = off;
	x->queued[i] = true;
	x->fill++;
	pthread_cond_broadcast(&x->cv);
	pthread_mutex_unlock(&x->mu);
}

/* The staged appends handed over. */
static void stage_flush(OutFile *o, OutDirect *x)
{
	if (!x->staged)
		return;
	out_submit(o, x->staged, x->pos);
	x->pos += (off_t)x->staged;
	x->staged = 0;
}

static bool stage_append(OutFile *o, OutDirect *x, const uint8_t *p, size_t n)
{
	while (n) {
		uint8_t *b = out_buffer(o);
		if (!b)
			return false;
		size_t k = DIRECT_BUF - x->staged < n ? DIRECT_BUF - x->staged : n;
		memcpy(b + x->staged, p, k);
		x->staged += k;
		p += k;
		n -= k;
		if (x->staged == DIRECT_BUF)
			stage_flush(o, x);
	}
	return !o->failed;
}

/* n bytes at off, through the buffers (pieces of DIRECT_BUF). */
static bool direct_pwrite(OutFile *o, const uint8_t *p, size_t n, off_t off)
{
	stage_flush(o, o->direct);
	while (n) {
		uint8_t *b = out_buffer(o);
		if (!b)
			return false;
		size_t k = n < DIRECT_BUF ? n : DIRECT_BUF;
		memcpy(b, p, k);
		out_submit(o, k, off);
		p += k;
		off += (off_t)k;
		n -= k;
	}
	return !o->failed;
}

size_t out_copy(OutFile *o, int fd, off_t src, size_t n, off_t at)
{
	size_t whole = n / DIRECT_ALIGN * DIRECT_ALIGN;
	if (at >= 0 && !o->no_clone && whole && src % DIRECT_ALIGN == 0 && at % DIRECT_ALIGN == 0) {
		struct file_clone_range r = {.src_fd = fd, .src_offset = (uint64_t)src, .src_length = whole,
		                             .dest_offset = (uint64_t)at};
		if (ioctl(o->fd, FICLONERANGE, &r) == 0) {
			written += whole;
			src += (off_t)whole;
			at += (off_t)whole;
			n -= whole;
		} else {
			o->no_clone = true;  /* this file system shares no blocks */
		}
	}
	OutDirect *x = o->direct;
	while (n && x && !o->failed) {
		/* read into the writer's buffers: no page of the input is mapped */
		uint8_t *b = out_buffer(o);
		if (!b)
			return 0;  /* o->failed: reported by the commit */
		size_t room = at < 0 ? DIRECT_BUF - x->staged : DIRECT_BUF;
		ssize_t k = pread(fd, b + (at < 0 ? x->staged : 0), n < room ? n : room, src);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if (at < 0) {
			x->staged += (size_t)k;
			if (x->staged == DIRECT_BUF)
				stage_flush(o, x);
		} else {
			out_submit(o, (size_t)k, at);
			at += k;
		}
		src += k;
		n -= (size_t)k;
	}
	loff_t in = src, to = at;
	while (n && !x && !o->failed) {
		ssize_t k = copy_file_range(fd, &in, o->fd, at < 0 ? NULL : &to, n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		written += (unsigned long long)k;
		n -= (size_t)k;
	}
	return o->failed ? 0 : n;
}

bool out_wait(OutFile *o)
{
	OutDirect *x = o->direct;
	if (!x)
		return !o->failed;
	stage_flush(o, x);
	pthread_mutex_lock(&x->mu);
	while (x->drain != x->fill)
		pthread_cond_wait(&x->cv, &x->mu);
	direct_check(o, x);
	pthread_mutex_unlock(&x->mu);
	return !o->failed;
}

/* Stop the thread (after what was handed over is written) and free. */
static void direct_close(OutFile *o)
{
	OutDirect *x = o->direct;
	if (!x)
		return;
	out_wait(o);
	pthread_mutex_lock(&x->mu);
	x->quit = true;
	pthread_cond_broadcast(&x->cv);
	pthread_mutex_unlock(&x->mu);
	pthread_join(x->thread, NULL);
	if (x->dfd >= 0)
		close(x->dfd);
	for (int i = 0; i < NBUF; i++)
		free(x->buf[i]);
	pthread_mutex_destroy(&x->mu);
	pthread_cond_destroy(&x->cv);
	free(x);
	o->direct = NULL;
}

/* ---- writing ---------------------------------------------------------------- */

bool out_write(OutFile *o, const void *buf, size_t n)
{
	if (o->direct)
		return stage_append(o, o->direct, buf, n);
	const char *p = buf;
	while (!o->failed && n) {
		ssize_t w = write(o->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->failed = true;
			o->err = w < 0 ? errno : ENOSPC;
			break;
		}
		p += w;
		n -= (size_t)w;
		written += (unsigned long long)w;
	}
	return !o->failed;
}

bool out_pwrite(OutFile *o, const void *buf, size_t n, off_t off)
{
	if (o->direct)
		return direct_pwrite(o, buf, n, off);
	return pwrite_all(o, o->fd, buf, n, off);
}

FILE *out_stdio(OutFile *o)
{
	if (!o->fp && o->fd >= 0) {
		o->fp = fdopen(o->fd, "w");
		if (!o->fp) {
			o->failed = true;
			o->err = errno;
		}
	}
	return o->fp;
}

bool out_finish(OutFile *o, Diag *d)
{
	direct_close(o);
	if (o->fp) {
		if (fflush(o->fp) != 0 || ferror(o->fp)) {
			if (!o->failed)
				o->err = errno ? errno : EIO;
			o->failed = true;
		}
	}
	if (!o->failed && (fchmod(o->fd, o->mode) != 0 || fsync(o->fd) != 0)) {
		o->failed = true;
		o->err = errno;
	}
	int rc = o->fp ? fclose(o->fp) : close(o->fd);
	if (rc != 0 && !o->failed) {
		o->failed = true;
		o->err = errno;
	}
	o->fp = NULL;
	o->fd = -1;
	if (o->failed) {
		diag_error(d, o->path, "cannot write: %s", strerror(o->err));
		out_abandon(o);
		return false;
	}
	return true;
}

bool out_rename(OutFile *o, Diag *d)
{
	/* the target may have become something else since out_open */
	struct stat st;
	if (lstat(o->path, &st) == 0 && !S_ISREG(st.st_mode)) {
		diag_error(d, o->path, "refusing to write: it exists and is not a regular file");
		out_abandon(o);
		return false;
	}
	if (rename(o->tmp, o->path) != 0) {
		diag_error(d, o->path, "cannot write: %s", strerror(errno));
		out_abandon(o);
		return false;
	}
	pending_set(o->tmp, NULL);
	free(o->tmp);
	o->tmp = NULL;
	/* the rename itself is durable once the folder is */
	char *dir = folder_of(o->path);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(dir);
	free(o->path);
	o->path = NULL;
	return true;
}

bool out_rename_pair(OutFile *first, OutFile *second, Diag *d)
{
	struct stat st;
	OutFile *both[2] = {first, second};
	for (int i = 0; i < 2; i++)
		if (lstat(both[i]->path, &st) == 0 && !S_ISREG(st.st_mode)) {
			diag_error(d, both[i]->path, "refusing to write: it exists and is not a regular file");
			out_abandon(first);
			out_abandon(second);
			return false;
		}
	sigset_t old;
	block_signals(&old);
	bool ok = out_rename(first, d);
	ok = ok ? out_rename(second, d) : (out_abandon(second), false);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ok;
}

bool out_commit(OutFile *o, Diag *d)
{
	return out_finish(o, d) && out_rename(o, d);
}

void out_abandon(OutFile *o)
{
	direct_close(o);
	if (o->fp)
		fclose(o->fp);
	else if (o->fd >= 0)
		close(o->fd);
	o->fp = NULL;
	o->fd = -1;
	if (o->tmp) {
		unlink(o->tmp);
		pending_set(o->tmp, NULL);
		free(o->tmp);
		o->tmp = NULL;
	}
	free(o->path);
	o->path = NULL;
}

bool out_write_file(const char *path, const void *data, size_t n, Diag *d)
{
	OutFile o;
	if (!out_open(&o, path, d))
		return false;
	out_write(&o, data, n);
	return out_commit(&o, d);
}

/* ---- the files of one run ------------------------------------------------ */

void fileset_init(FileSet *s)
{
	memset(s, 0, sizeof *s);
}

void fileset_free(FileSet *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->e[i].path);
		free(s->e[i].canon);
	}
	free(s->e);
	memset(s, 0, sizeof *s);
}

/* realpath of the folder, then the name: the same string for two spellings
 * of one path, whether or not the file exists yet. */
static char *canonical(const char *path)
{
	char *dir = folder_of(path);
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char real[PATH_MAX];
	char *out;
	if (realpath(dir, real)) {
		out = malloc(strlen(real) + strlen(base) + 2);
		if (out)
			sprintf(out, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base);
	} else {
		out = strdup(path);
	}
	free(dir);
	return out;
}

static FileEntry describe(const char *path)
{
	FileEntry e = {0};
	struct stat st;
	e.path = strdup(path);
	e.canon = canonical(path);
	if (stat(path, &st) == 0) {
		e.exists = true;
		e.dev = st.st_dev;
		e.ino = st.st_ino;
	}
	return e;
}

static bool same(const FileEntry *a, const FileEntry *b)
{
	if (a->exists && b->exists && a->dev == b->dev && a->ino == b->ino)
		return true;
	return a->canon && b->canon && strcmp(a->canon, b->canon) == 0;
}

static void add(FileSet *s, FileEntry e)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		FileEntry *ne = realloc(s->e, sizeof *ne * s->cap);
		if (!ne)
			abort();
		s->e = ne;
	}
	s->e[s->n++] = e;
}

void fileset_input(FileSet *s, const char *path, FileRole role)
{
	FileEntry e = describe(path);
	e.role = role;
	add(s, e);
}

static const char *role_name(FileRole r)
{
	switch (r) {
	case FILE_INPUT_MODEL: return "the input model";
	case FILE_INPUT_DATA: return "the input model's external data";
	case FILE_INPUT: return "the input";
	case FILE_OUTPUT: return "the output";
	}
	return "a file of this run";
}

const FileEntry *fileset_find(const FileSet *s, const char *path)
{
	FileEntry e = describe(path);
	const FileEntry *hit = NULL;
	for (size_t i = 0; i < s->n && !hit; i++)
		if (same(&e, &s->e[i]))
			hit = &s->e[i];
	free(e.path);
	free(e.canon);
	return hit;
}

bool fileset_output(FileSet *s, const char *path, unsigned allow, Diag *d)
{
	mode_t mode;
	if (!check_target(path, &mode, d))
		return false;
	FileEntry e = describe(path);
	for (size_t i = 0; i < s->n; i++) {
		if (!same(&e, &s->e[i]) || (s->e[i].role & allow))
			continue;
		if (s->e[i].role == FILE_INPUT_MODEL)
			diag_error(d, path, "refusing to overwrite the input model '%s' (use --overwrite to allow it)",
			           s->e[i].path);
		else
			diag_error(d, path, "refusing to write: it is the same file as %s '%s'", role_name(s->e[i].role),
			           s->e[i].path);
		free(e.path);
		free(e.canon);
		return false;
	}
	e.role = FILE_OUTPUT;
	add(s, e);
	return true;
}
