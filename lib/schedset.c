/*
 * schedset.c: a set of schedules (a parsed schedule file) held compactly,
 * so that the memory of mq schedule apply grows with the file's bytes by
 * a small factor, not by the size of struct mq_schedule (over a kilobyte)
 * for each of a 16 MiB file's hundreds of thousands of schedules.
 *
 * A schedule is one record of bytes in an arena: its name, the numbers
 * of its expression, zone and queue (each distinct text kept once: a
 * file repeats them), its numbers as varints, its key and its payload.
 * A record is read back whole into a struct mq_schedule (get), its
 * payload pointing into the arena.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"

/* An index of strings by hash: each slot 0 (empty) or a number + 1 (of
 * a text, of a schedule), open addressing, at most half full. */
struct table {
	uint32_t *slots;
	size_t n;		/* slots, a power of 2 */
	size_t used;
};

struct mq_schedset {
	unsigned char *arena;	/* the records */
	size_t used, cap;
	uint32_t *off;		/* each record's offset in arena */
	size_t n, ncap;
	/* the distinct texts of expressions, zones and queues: NUL-ended
	 * in strs, text i at stroff[i]; found by hash (index + 1, open
	 * addressing, at most half full) */
	char *strs;
	size_t sused, scap;
	uint32_t *stroff;
	size_t nstr, nstrcap;
	struct table texts;
	struct table names;	/* the schedules by name (the first) */
};

struct mq_schedset *
mq_schedset_new(void)
{
	return calloc(1, sizeof(struct mq_schedset));
}

void
mq_schedset_free(struct mq_schedset *set)
{
	if (set == NULL)
		return;
	free(set->arena);
	free(set->off);
	free(set->strs);
	free(set->stroff);
	free(set->texts.slots);
	free(set->names.slots);
	free(set);
}

size_t
mq_schedset_count(const struct mq_schedset *set)
{
	return set ? set->n : 0;
}

/* p (of *cap elements of elem bytes, used used) with room for need
 * more: p itself, or grown; NULL: out of memory (p unchanged). Offsets
 * are 32 bits: a set stays under 4 GiB (a 16 MiB file's is a few times
 * that). */
static void *
room(void *p, size_t *cap, size_t used, size_t need, size_t elem)
{
	size_t nc = *cap ? *cap : 64;
	void *nb;

	if (used + need <= *cap)
		return p;
	if (used + need > UINT32_MAX)
		return NULL;
	while (nc < used + need)
		nc *= 2;
	if ((nb = realloc(p, nc * elem)) == NULL)
		return NULL;
	*cap = nc;
	return nb;
}

/* Sets *field to room()'s answer: 0, or -1 (out of memory). */
#define ROOM(field, cap, used, need) \
	((tmp = room((field), &(cap), (used), (need), sizeof *(field))) == \
	    NULL ? -1 : ((field) = tmp, 0))

static size_t
hash(const char *s)
{
	size_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* The string of number + 1 v in table t (the texts' or the names'). */
static const char *
key(const struct mq_schedset *set, const struct table *t, uint32_t v)
{
	return t == &set->texts ? set->strs + set->stroff[v - 1] :
	    mq_schedset_name(set, v - 1);
}

/* The slot of s in t: its number + 1 there, or 0 where it would go. */
static uint32_t *
slot(const struct mq_schedset *set, const struct table *t, const char *s)
{
	size_t i = hash(s) & (t->n - 1);

	while (t->slots[i] != 0 && strcmp(key(set, t, t->slots[i]), s) != 0)
		i = (i + 1) & (t->n - 1);
	return &t->slots[i];
}

/* Room in t for one more: 0, or -1 (out of memory). */
static int
table_room(struct mq_schedset *set, struct table *t)
{
	uint32_t *old = t->slots;
	size_t n = t->n, i;

	if (2 * (t->used + 1) <= t->n)
		return 0;
	t->n = n ? 2 * n : 64;
	if ((t->slots = calloc(t->n, sizeof *t->slots)) == NULL) {
		t->slots = old;
		t->n = n;
		return -1;
	}
	for (i = 0; i < n; i++)
		if (old[i])
			*slot(set, t, key(set, t, old[i])) = old[i];
	free(old);
	return 0;
}

/* The number of text s, kept once; UINT32_MAX: out of memory. */
static uint32_t
intern(struct mq_schedset *set, const char *s)
{
	size_t len = strlen(s) + 1;
	uint32_t *at;
	void *tmp;

	if (table_room(set, &set->texts) != 0)
		return UINT32_MAX;
	at = slot(set, &set->texts, s);
	if (*at)
		return *at - 1;
	if (ROOM(set->strs, set->scap, set->sused, len) != 0 ||
	    ROOM(set->stroff, set->nstrcap, set->nstr, 1) != 0)
		return UINT32_MAX;
	memcpy(set->strs + set->sused, s, len);
	set->stroff[set->nstr] = (uint32_t)set->sused;
	set->sused += len;
	*at = (uint32_t)++set->nstr;
	set->texts.used++;
	return (uint32_t)(set->nstr - 1);
}

size_t
mq_schedset_find(const struct mq_schedset *set, const char *name)
{
	return set->names.n ? *slot(set, &set->names, name) : 0;
}

/* ---- a record's bytes ---- */

static unsigned char *
put_varint(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

static const unsigned char *
get_varint(const unsigned char *p, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	do {
		*v |= (uint64_t)(*p & 0x7f) << shift;
		shift += 7;
	} while (*p++ & 0x80);
	return p;
}

#define VARINT_MAX 10
#define FLAG_KEY 1		/* then the missed policy, two bits */

enum mq_status
mq_schedset_add(struct mq_schedset *set, const struct mq_schedule *s)
{
	size_t name_len = strlen(s->name), key_len = s->has_key ?
	    strlen(s->key) : 0;
	size_t most = 1 + name_len + 1 + 3 * VARINT_MAX + 1 + 4 * VARINT_MAX +
	    1 + key_len + VARINT_MAX + s->payload_len;
	uint32_t ids[3];
	unsigned char *p;
	int64_t prio = s->priority;
	uint32_t *name_at;
	void *tmp;

	if (name_len > MQ_SCHEDULE_NAME_MAX || key_len > MQ_KEY_MAX)
		return MQ_EINVAL;
	if ((ids[0] = intern(set, s->expr)) == UINT32_MAX ||
	    (ids[1] = intern(set, s->zone)) == UINT32_MAX ||
	    (ids[2] = intern(set, s->queue)) == UINT32_MAX ||
	    table_room(set, &set->names) != 0 ||
	    ROOM(set->arena, set->cap, set->used, most) != 0 ||
	    ROOM(set->off, set->ncap, set->n, 1) != 0)
		return MQ_ENOMEM;
	p = set->arena + set->used;
	*p++ = (unsigned char)name_len;
	memcpy(p, s->name, name_len + 1);
	p += name_len + 1;
	for (int i = 0; i < 3; i++)
		p = put_varint(p, ids[i]);
	*p++ = (unsigned char)((s->has_key ? FLAG_KEY : 0) |
	    ((unsigned)s->missed & 3) << 1);
	/* zigzag: a small negative priority is a small number too */
	p = put_varint(p, prio < 0 ? ((uint64_t)-(prio + 1) << 1) | 1 :
	    (uint64_t)prio << 1);
	p = put_varint(p, s->max_attempts);
	p = put_varint(p, s->missed_max);
	p = put_varint(p, s->line);
	if (s->has_key) {
		*p++ = (unsigned char)key_len;
		memcpy(p, s->key, key_len);
		p += key_len;
	}
	p = put_varint(p, s->payload_len);
	if (s->payload_len)
		memcpy(p, s->payload, s->payload_len);
	p += s->payload_len;
	set->off[set->n++] = (uint32_t)set->used;
	set->used = (size_t)(p - set->arena);
	/* by name: the first of a name is found */
	name_at = slot(set, &set->names, s->name);
	if (*name_at == 0) {
		*name_at = (uint32_t)set->n;
		set->names.used++;
	}
	return MQ_OK;
}

const char *
mq_schedset_name(const struct mq_schedset *set, size_t i)
{
	return (const char *)set->arena + set->off[i] + 1;
}

void
mq_schedset_get(const struct mq_schedset *set, size_t i,
    struct mq_schedule *s)
{
	const unsigned char *p = set->arena + set->off[i];
	uint64_t v, prio;
	size_t len = *p++;
	unsigned flags;
	char *strs[3] = { s->expr, s->zone, s->queue };
	size_t sizes[3] = { sizeof s->expr, sizeof s->zone, sizeof s->queue };

	memcpy(s->name, p, len + 1);
	p += len + 1;
	for (int k = 0; k < 3; k++) {
		p = get_varint(p, &v);
		const char *t = set->strs + set->stroff[v];

		len = strlen(t) < sizes[k] - 1 ? strlen(t) : sizes[k] - 1;
		memcpy(strs[k], t, len);
		strs[k][len] = '\0';
	}
	flags = *p++;
	s->has_key = flags & FLAG_KEY;
	s->missed = (enum mq_missed)(flags >> 1 & 3);
	p = get_varint(p, &prio);
	s->priority = (int)(prio & 1 ? -(int64_t)(prio >> 1) - 1 :
	    (int64_t)(prio >> 1));
	p = get_varint(p, &v);
	s->max_attempts = (unsigned)v;
	p = get_varint(p, &v);
	s->missed_max = (unsigned)v;
	p = get_varint(p, &v);
	s->line = (unsigned)v;
	s->key[0] = '\0';
	if (s->has_key) {
		len = *p++;
		memcpy(s->key, p, len);
		s->key[len] = '\0';
		p += len;
	}
	p = get_varint(p, &v);
	s->payload_len = (size_t)v;
	s->payload = (unsigned char *)p;
}

const char *
mq_schedset_queue(const struct mq_schedset *set, size_t i)
{
	const unsigned char *p = set->arena + set->off[i];
	uint64_t v;

	p += 1 + *p + 1;	/* the name */
	p = get_varint(p, &v);	/* the expression */
	p = get_varint(p, &v);	/* the zone */
	get_varint(p, &v);
	return set->strs + set->stroff[v];
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

uint32_t *
mq_schedset_by_name(const struct mq_schedset *set)
{
	const char **names = malloc((set->n + 1) * sizeof *names);
	uint32_t *by = malloc((set->n + 1) * sizeof *by);
	size_t i, lo, hi, at;

	if (names == NULL || by == NULL) {
		free(names);
		free(by);
		return NULL;
	}
	for (i = 0; i < set->n; i++)
		names[i] = mq_schedset_name(set, i);
	qsort(names, set->n, sizeof *names, cmp_str);
	/* each name's record: its offset, among the ascending offsets */
	for (i = 0; i < set->n; i++) {
		at = (size_t)((const unsigned char *)names[i] - 1 - set->arena);
		for (lo = 0, hi = set->n; hi - lo > 1;)
			if (set->off[(lo + hi) / 2] <= at)
				lo = (lo + hi) / 2;
			else
				hi = (lo + hi) / 2;
		by[i] = (uint32_t)lo;
	}
	free(names);
	return by;
}
