/* input_file.c - opening a user's file for reading (models, external data,
 * rules files, text models, .pb tensors): only a regular file is accepted,
 * so a FIFO cannot block graft forever and a device cannot feed it
 * endlessly, and its size is known before anything is read. */
#include "ir.h"

#include <errno.h>
#include <fcntl.h>
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
