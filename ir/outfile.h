/* outfile.h - the one place that writes files.
 *
 * Every file graft writes (models and their external data, reports, DOT
 * graphs, run outputs, verify's counterexamples, graftc's generated C) goes
 * through an OutFile: a new temporary file is created beside the target with
 * O_EXCL, written, fsync'ed and renamed over the target, and the folder is
 * fsync'ed.  A target that exists and is not a regular file (a device, a FIFO,
 * a symlink, a folder) is refused; a file that is replaced keeps its permissions.
 * Until it is committed the temporary file is registered, so SIGINT, SIGTERM
 * and SIGHUP remove it (out_catch_signals) and a failed write leaves nothing.
 *
 * A FileSet records the files of one run (inputs and outputs, by path and by
 * device and inode), so that no output ever lands on an input, on the input
 * model's external data, or on another output of the same run. */
#ifndef GRAFT_OUTFILE_H
#define GRAFT_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "diag.h"

typedef struct OutFile {
	char *path;     /* the target, as given */
	char *tmp;      /* the temporary file beside it; NULL once committed or abandoned */
	int fd;         /* open on tmp, -1 when closed */
	FILE *fp;       /* non-NULL after out_stdio(): owns fd */
	mode_t mode;    /* the mode the committed file gets */
	bool failed;    /* a write failed (errno in err) */
	int err;
	struct OutDirect *direct;  /* after out_direct: the writer thread */
	bool no_clone;  /* out_copy: this file system shares no blocks */
} OutFile;
typedef struct OutDirect OutDirect;

/* Check the target and create the temporary file.  False (with a message
 * naming path) if the target exists and is not a regular file, or the
 * temporary file cannot be made. */
bool out_open(OutFile *o, const char *path, Diag *d);
/* Large outputs (hundreds of MB): from now on o's writes are done by a
 * thread, in the order given, while the caller goes on (computing the next
 * piece), and whole aligned blocks go straight to the disk (O_DIRECT)
 * instead of through the page cache, which here costs 2-3x the disk's own
 * time (BENCHMARKS.md).  The file's bytes are the same either way; where
 * the file system refuses direct writes they go through the cache.  Call
 * it before the first write (nothing changes if it cannot be done: o->direct
 * stays NULL); then o->fd's position is not kept (copy_file_range only at
 * explicit offsets), and out_wait comes before anything that needs the
 * writes done (ftruncate). */
void out_direct(OutFile *o);
/* Direct mode: a free buffer of DIRECT_BUF bytes, 4096-aligned, to fill and
 * hand over with out_submit (NULL once a write failed: o->failed). */
#define DIRECT_BUF ((size_t)8 << 20)
uint8_t *out_buffer(OutFile *o);
/* Write n bytes of the buffer out_buffer gave at offset off. */
void out_submit(OutFile *o, size_t n, off_t off);
/* n bytes of the file open as fd, from offset src, into o at offset at
 * (or appended, at < 0), file to file: blocks shared where the file system
 * can (at an offset, whole aligned blocks; tried once per file), else read
 * into the writer's buffers (direct mode), else copied by the kernel
 * (copy_file_range).  Returns how many of the last bytes were not copied:
 * the caller writes them from memory. */
size_t out_copy(OutFile *o, int fd, off_t src, size_t n, off_t at);
/* Every write handed over done; false if one failed. */
bool out_wait(OutFile *o);
/* Append n bytes; failures are remembered and reported by out_commit. */
bool out_write(OutFile *o, const void *buf, size_t n);
/* Write n bytes at offset off (external data), failures as out_write. */
bool out_pwrite(OutFile *o, const void *buf, size_t n, off_t off);
/* A stdio stream over the temporary file (for printers); owned by o. */
FILE *out_stdio(OutFile *o);
/* Flush, fsync, close and leave the temporary file in place (step one of
 * a commit of several files: the model's data file, then the model). */
bool out_finish(OutFile *o, Diag *d);
/* Rename a finished file over its target and fsync the folder. */
bool out_rename(OutFile *o, Diag *d);
/* out_finish, then out_rename. */
bool out_commit(OutFile *o, Diag *d);
/* Rename two finished files that belong together (a model's data file,
 * then the model): both targets are checked first, and no INT, TERM or HUP
 * lands between the renames, so neither is replaced without the other but
 * for a failing rename() itself.  On failure both are abandoned. */
bool out_rename_pair(OutFile *first, OutFile *second, Diag *d);
/* Bytes every OutFile of the process has written so far (any thread may
 * read it: the CLI's progress line). */
uint64_t out_bytes_written(void);
/* Remove the temporary file (if any) and release o. */
void out_abandon(OutFile *o);
/* The whole of data into path, through an OutFile. */
bool out_write_file(const char *path, const void *data, size_t n, Diag *d);

/* Remove the pending temporary files on SIGINT, SIGTERM and SIGHUP (then
 * die of the signal as before).  Called once by a program's main. */
void out_catch_signals(void);
/* Unlink every pending temporary file; async-signal-safe (for other
 * handlers, e.g. the one that turns SIGBUS on a shrunk input into an error). */
void out_remove_pending(void);

/* ---- the files of one run ---------------------------------------------- */

typedef enum FileRole {
	FILE_INPUT_MODEL = 1,   /* "the input model" */
	FILE_INPUT_DATA = 2,    /* "the input model's external data" */
	FILE_INPUT = 4,         /* "the input" (rules files, run's input tensors ...) */
	FILE_OUTPUT = 8,        /* "the output" */
} FileRole;

typedef struct FileEntry {
	char *path;     /* as given, for messages */
	char *canon;    /* realpath of its folder + '/' + its name */
	dev_t dev;
	ino_t ino;
	bool exists;
	FileRole role;
} FileEntry;

typedef struct FileSet {
	FileEntry *e;
	size_t n, cap;
} FileSet;

void fileset_init(FileSet *s);
void fileset_free(FileSet *s);
/* Note an input of the run (read, never written). */
void fileset_input(FileSet *s, const char *path, FileRole role);
/* Claim path as an output: refused (false, a one-line message naming both
 * paths) if it is the same file as an input or another output, by device
 * and inode or by path.  allow: the roles (a mask) the output may replace:
 * --overwrite lets -o replace FILE_INPUT_MODEL, and its data file the
 * input's FILE_INPUT_DATA; 0 otherwise. */
bool fileset_output(FileSet *s, const char *path, unsigned allow, Diag *d);
/* The entry path is the same file as, or NULL. */
const FileEntry *fileset_find(const FileSet *s, const char *path);

#endif
