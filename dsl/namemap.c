/* namemap.c - names to pointers, open addressing (see namemap.h). */
#include "namemap.h"

#include <stdlib.h>
#include <string.h>

static void init(NameMap *m, size_t most)
{
	size_t cap = 16;
	while (cap < 2 * most)
		cap *= 2;
	if (!(m->keys = calloc(cap, sizeof *m->keys)) || !(m->vals = calloc(cap, sizeof *m->vals)))
		abort();
	m->mask = cap - 1;
	m->n = 0;
}

NameMap *namemap_new(size_t most)
{
	NameMap *m = malloc(sizeof *m);
	if (!m)
		abort();
	init(m, most);
	return m;
}

void namemap_free(NameMap *m)
{
	if (!m)
		return;
	free(m->keys);
	free(m->vals);
	free(m);
}

static size_t name_hash(const char *s)
{
	size_t h = 1469598103934665603u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

/* The slot of name: where it is, or the empty one where it would go. */
static size_t slot(const NameMap *m, const char *name)
{
	size_t i = name_hash(name) & m->mask;
	while (m->keys[i] && strcmp(m->keys[i], name) != 0)
		i = (i + 1) & m->mask;
	return i;
}

void *namemap_get(const NameMap *m, const char *name)
{
	return m->vals[slot(m, name)];
}

void namemap_put(NameMap *m, const char *name, void *val)
{
	if (2 * (m->n + 1) > m->mask + 1) {
		NameMap old = *m;
		init(m, old.mask + 1);
		for (size_t i = 0; i <= old.mask; i++)
			if (old.keys[i])
				namemap_put(m, old.keys[i], old.vals[i]);
		free(old.keys);
		free(old.vals);
	}
	size_t i = slot(m, name);
	m->n += !m->keys[i];
	m->keys[i] = name;
	m->vals[i] = val;
}
