/* arena.c - bump allocator (see arena.h).  Chunks grow geometrically; a
 * request larger than a chunk gets a chunk of its own. */
#include "arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Chunk {
	struct Chunk *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
} Chunk;

struct Arena {
	Chunk *head;
	size_t next_size;
};

Arena *arena_new(void)
{
	Arena *a = calloc(1, sizeof *a);
	if (!a)
		abort();
	a->next_size = 4096;
	return a;
}

void arena_free(Arena *a)
{
	if (!a)
		return;
	for (Chunk *c = a->head, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(a);
}

void *arena_alloc(Arena *a, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	Chunk *c = a->head;
	if (!c || c->size - c->used < size) {
		size_t csize = a->next_size;
		if (csize < size)
			csize = size;
		else if (a->next_size < (1u << 20))
			a->next_size *= 2;
		c = malloc(sizeof *c + csize);
		if (!c)
			abort(); /* out of memory is not a user error we can report */
		c->size = csize;
		c->used = 0;
		c->next = a->head;
		a->head = c;
	}
	void *p = c->data + c->used;
	c->used += size;
	memset(p, 0, size);
	return p;
}

void *arena_dup(Arena *a, const void *p, size_t size)
{
	void *q = arena_alloc(a, size ? size : 1);
	if (size)
		memcpy(q, p, size);
	return q;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
	char *q = arena_alloc(a, n + 1);
	memcpy(q, s, n);
	q[n] = 0;
	return q;
}

char *arena_strdup(Arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
	/* formatted once into a stack buffer; only a longer string is
	 * formatted again, into its arena space */
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	char *q = arena_alloc(a, (size_t)n + 1);
	if ((size_t)n < sizeof buf) {
		memcpy(q, buf, (size_t)n + 1);
		return q;
	}
	va_start(ap, fmt);
	vsnprintf(q, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return q;
}
