/* progress.h - the progress line of graft optimize, convert and fold on
 * stderr: the stage (loading, converting, rewriting, saving), the bytes it
 * has read or written, the rate and the time, redrawn in place a few times
 * a second.  Shown when stderr is a terminal and the run has taken over a
 * second (or always with --progress, one line per stage when stderr is not
 * a terminal); --quiet, or stderr piped, shows nothing.  The line is
 * erased before anything else is printed, so a run's other output is the
 * same with and without it.
 *
 * A thread draws the line, so a long stage with nothing to report (a
 * rewrite of many nodes) still shows its time; the main thread only sets
 * the stage.  Bytes written are outfile.c's count of what every OutFile
 * has written (out_bytes_written). */
#ifndef GRAFT_PROGRESS_H
#define GRAFT_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef enum ProgressMode {
	PROGRESS_AUTO,      /* a terminal, after a second */
	PROGRESS_ALWAYS,    /* --progress */
	PROGRESS_NEVER,     /* --quiet */
} ProgressMode;

/* Start timing the run (the line may appear a second later). */
void progress_begin(ProgressMode mode);
/* A new stage: "loading", "converting", "rewriting", "saving"; what names
 * its file (or NULL); bytes is the size to read (loading) or 0. */
void progress_stage(const char *stage, const char *what, uint64_t bytes);
/* stderr for the run's messages: a stream that erases the line before
 * each write (stderr itself when no line is drawn). */
FILE *progress_log(void);
/* b bytes as "812 B", "1.2 MiB" (also graft info's sizes). */
void human_bytes(char *buf, size_t size, double b);
/* The run is over: the line is erased (a terminal) or ended. */
void progress_end(void);

#endif
