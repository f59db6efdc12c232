/* input_file.c - opening a user's file for reading (models, external data,
 * rules files, text models, .pb tensors): only a regular file is accepted,
 * so a FIFO cannot block graft forever and a device cannot feed it
 * endlessly, and its size is known before anything is read.  Also the guard
 * that turns SIGBUS from a mapped model file that shrank into a message. */
#include "ir.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ir_open_regular(const char *path, struct stat *st, int *err)
{
	/* O_NONBLOCK: opening a FIFO with no writer returns at once (and a
	 * device with a slow open does not wait); the flag is cleared once the
	 * file is known to be regular, where it changes nothing anyway */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		*err = errno;
		return -1;
	}
	if (fstat(fd, st) != 0) {
		*err = errno;
		close(fd);
		return -1;
	}
	if (!S_ISREG(st->st_mode)) {
		*err = S_ISDIR(st->st_mode) ? EISDIR : IR_OPEN_NOT_REGULAR;
		close(fd);
		return -1;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
		*err = errno;
		close(fd);
		return -1;
	}
	return fd;
}

const char *ir_open_strerror(int err)
{
	return err == IR_OPEN_NOT_REGULAR ? "not a regular file" : strerror(err);
}

/* ---- mapped inputs that shrink ------------------------------------------------
 * ir_load_file maps its file (MAP_PRIVATE), and tensors keep pointing into
 * the mapping until the model is freed.  If someone truncates the file
 * meanwhile, touching a page past its new end raises SIGBUS.  With the guard
 * installed (the CLI does), that becomes one line naming the file, the
 * cleanup hook (temporary outputs to remove), and exit status 1.  Only
 * async-signal-safe calls in the handler: write, _exit. */

/* The guarded mappings, as many as are mapped (a model with external data
 * maps each data file).  The table grows outside the handler only: a
 * SIGBUS comes from touching a mapping, never from inside ir_guard_add
 * (graft runs one thread), so the handler always sees a whole table. */
typedef struct Guarded {
	const uint8_t *base;
	size_t len;
	char *path;
} Guarded;

static Guarded *volatile guarded;
static volatile sig_atomic_t nguarded;
static int guard_cap;
static void (*guard_cleanup)(void);

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	const uint8_t *a = si->si_addr;
	for (int i = 0; i < nguarded; i++) {
		const Guarded *gd = &guarded[i];
		if (!gd->base || a < gd->base || a >= gd->base + gd->len)
			continue;
		static const char pre[] = "graft: ", post[] = ": the file changed size while graft was reading it\n";
		ssize_t r = write(2, pre, sizeof pre - 1);
		r = write(2, gd->path, strlen(gd->path));
		r = write(2, post, sizeof post - 1);
		(void)r;
		if (guard_cleanup)
			guard_cleanup();
		_exit(1);
	}
	/* not a mapped input's: the default action (the core dump a bug deserves) */
	signal(sig, SIG_DFL);
	raise(sig);
}

bool ir_guard_mapped_inputs(void (*cleanup)(void))
{
	guard_cleanup = cleanup;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) != 0)
		return false;
	return true;
}

void ir_guard_add(const void *base, size_t len, const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return; /* out of memory: this mapping goes unguarded */
	for (int i = 0; i < nguarded; i++)
		if (!guarded[i].base) {
			guarded[i].path = copy;
			guarded[i].len = len;
			guarded[i].base = base;
			return;
		}
	if (nguarded == guard_cap) {
		/* a new table, filled, then published: the old one stays valid
		 * until the pointer moves (and is freed after) */
		int cap = guard_cap ? 2 * guard_cap : 16;
		Guarded *t = calloc((size_t)cap, sizeof *t), *old = guarded;
		if (!t) {
			free(copy);
			return;
		}
		if (nguarded)
			memcpy(t, old, sizeof *t * (size_t)nguarded);
		guarded = t;
		guard_cap = cap;
		free(old);
	}
	guarded[nguarded] = (Guarded){base, len, copy};
	nguarded++;
}

void ir_guard_remove(const void *base)
{
	for (int i = 0; i < nguarded; i++)
		if (guarded[i].base == base) {
			guarded[i].base = NULL;
			free(guarded[i].path);
			guarded[i].path = NULL;
		}
}
