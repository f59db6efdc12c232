/* progress.c - the progress line (see progress.h). */
#include "progress.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ir/outfile.h"

static struct {
	ProgressMode mode;
	bool tty, on, drawn;        /* stderr a terminal; a line is kept; something is on screen */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	double t0, stage_t0;        /* the run's start, the stage's */
	char stage[32], what[4096];
	uint64_t bytes, written0;   /* the stage's size to read; out_bytes_written() at its start */
} P = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void human_bytes(char *buf, size_t size, double b)
{
	const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;
	while (b >= 1024 && u < 4) {
		b /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", b, units[u]);
}

/* The stage as one line, without a line end (P.lock held). */
static void format(char *line, size_t size, double t)
{
	double secs = t - P.stage_t0;
	char a[32], r[32];
	int n = snprintf(line, size, "graft: %s%s%s", P.stage, *P.what ? " " : "", P.what);
	if (!strcmp(P.stage, "saving")) {
		uint64_t w = out_bytes_written() - P.written0;
		human_bytes(a, sizeof a, (double)w);
		human_bytes(r, sizeof r, secs > 0 ? (double)w / secs : 0);
		n += snprintf(line + n, size - (size_t)n, ": %s written, %s/s", a, r);
	} else if (P.bytes) {
		human_bytes(a, sizeof a, (double)P.bytes);
		n += snprintf(line + n, size - (size_t)n, " (%s)", a);
	}
	snprintf(line + n, size - (size_t)n, ", %.1f s", secs);
}

/* Redraw the line in place (a terminal; P.lock held). */
static void draw(double t)
{
	char line[4400];
	format(line, sizeof line, t);
	fprintf(stderr, "\r%s\033[K", line);
	fflush(stderr);
	P.drawn = true;
}

static void *run(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&P.lock);
	while (!P.stop) {
		double t = now();
		if (P.mode == PROGRESS_ALWAYS || t - P.t0 >= 1.0)
			draw(t);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&P.wake, &P.lock, &ts);
	}
	pthread_mutex_unlock(&P.lock);
	return NULL;
}

void progress_begin(ProgressMode mode)
{
	P.mode = mode;
	P.tty = isatty(2);
	P.on = mode == PROGRESS_ALWAYS || (mode == PROGRESS_AUTO && P.tty);
	P.t0 = P.stage_t0 = now();
	if (P.on && P.tty && pthread_create(&P.thread, NULL, run, NULL) != 0)
		P.on = false; /* no thread: no line */
}

/* Not a terminal (--progress): the stage that ends, as one line. */
static void end_line(double t)
{
	if (!*P.stage)
		return;
	char line[4400];
	format(line, sizeof line, t);
	fprintf(stderr, "%s\n", line);
}

void progress_stage(const char *stage, const char *what, uint64_t bytes)
{
	if (!P.on)
		return;
	pthread_mutex_lock(&P.lock);
	double t = now();
	if (!P.tty)
		end_line(t);
	snprintf(P.stage, sizeof P.stage, "%s", stage);
	snprintf(P.what, sizeof P.what, "%s", what ? what : "");
	P.bytes = bytes;
	P.written0 = out_bytes_written();
	P.stage_t0 = t;
	if (P.tty && (P.mode == PROGRESS_ALWAYS || t - P.t0 >= 1.0))
		draw(t);
	pthread_mutex_unlock(&P.lock);
}

/* fopencookie's write: erase the line, then write the text (the thread
 * draws the line again below it). */
static ssize_t log_write(void *cookie, const char *buf, size_t n)
{
	(void)cookie;
	pthread_mutex_lock(&P.lock);
	if (P.drawn) {
		fputs("\r\033[K", stderr);
		P.drawn = false;
	}
	size_t w = fwrite(buf, 1, n, stderr);
	fflush(stderr);
	pthread_mutex_unlock(&P.lock);
	return (ssize_t)w;
}

FILE *progress_log(void)
{
	static FILE *f;
	if (!P.on || !P.tty)
		return stderr;
	if (!f) {
		f = fopencookie(NULL, "w", (cookie_io_functions_t){.write = log_write});
		if (!f)
			return stderr;
		setvbuf(f, NULL, _IONBF, 0);
	}
	return f;
}

void progress_end(void)
{
	if (!P.on)
		return;
	pthread_mutex_lock(&P.lock);
	P.stop = true;
	if (!P.tty)
		end_line(now());
	pthread_cond_signal(&P.wake);
	pthread_mutex_unlock(&P.lock);
	if (P.tty) {
		pthread_join(P.thread, NULL);
		if (P.drawn)
			fprintf(stderr, "\r\033[K");
	}
	P.on = false;
}
