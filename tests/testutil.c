/* testutil.c - helpers shared by the Check suites (see testutil.h). */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void collect(const char *dir, char ***paths, size_t *n, size_t *cap)
{
	DIR *dp = opendir(dir);
	if (!dp)
		return;
	struct dirent *de;
	while ((de = readdir(dp))) {
		if (de->d_name[0] == '.')
			continue;
		char *p = malloc(strlen(dir) + strlen(de->d_name) + 2);
		sprintf(p, "%s/%s", dir, de->d_name);
		struct stat st;
		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
			collect(p, paths, n, cap);
			free(p);
			continue;
		}
		size_t len = strlen(p);
		if (len < 5 || strcmp(p + len - 5, ".onnx") != 0) {
			free(p);
			continue;
		}
		if (*n + 2 > *cap) {
			*cap = *cap ? *cap * 2 : 256;
			*paths = realloc(*paths, sizeof **paths * *cap);
		}
		(*paths)[(*n)++] = p;
	}
	closedir(dp);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **find_models(const char *dir, size_t *count)
{
	char **paths = NULL;
	size_t n = 0, cap = 0;
	collect(dir, &paths, &n, &cap);
	if (!paths)
		paths = calloc(1, sizeof *paths);
	qsort(paths, n, sizeof *paths, cmp_str);
	paths[n] = NULL;
	*count = n;
	return paths;
}

void paths_free(char **paths)
{
	for (char **p = paths; p && *p; p++)
		free(*p);
	free(paths);
}

uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
	if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

bool write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return false;
	bool ok = fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok;
}

const char *corpus_dir(void)
{
	const char *env = getenv("GRAFT_CORPUS");
	const char *dir = env && *env ? env : CORPUS_DIR;
	struct stat st;
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? dir : NULL;
}

char *temp_dir(void)
{
	char *t = strdup("/tmp/graft-test-XXXXXX");
	if (!mkdtemp(t)) {
		free(t);
		return NULL;
	}
	return t;
}

void rm_rf(const char *path)
{
	DIR *dp = opendir(path);
	if (dp) {
		struct dirent *de;
		while ((de = readdir(dp))) {
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			char *p = malloc(strlen(path) + strlen(de->d_name) + 2);
			sprintf(p, "%s/%s", path, de->d_name);
			rm_rf(p);
			free(p);
		}
		closedir(dp);
		rmdir(path);
	} else {
		unlink(path);
	}
}

const char *load_error(const char *path)
{
	static char msg[1024];
	Diag d;
	diag_init(&d, NULL);
	IrModel *m = ir_load_file(path, NULL, &d);
	if (m) {
		ir_model_free(m);
		return "(loaded without error)";
	}
	snprintf(msg, sizeof msg, "%s", d.first);
	return msg;
}
