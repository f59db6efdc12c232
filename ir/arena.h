/* arena.h - a bump allocator for the IR's strings and small arrays.
 * Everything allocated from an arena is freed at once with it; nothing is
 * freed singly.  Used for data whose lifetime is the model's (or one save's). */
#ifndef GRAFT_ARENA_H
#define GRAFT_ARENA_H

#include <stddef.h>

typedef struct Arena Arena;

Arena *arena_new(void);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t size);          /* zeroed, 16-byte aligned */
void *arena_dup(Arena *a, const void *p, size_t size);
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
