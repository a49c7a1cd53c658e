/*
 * candidates.h: the due jobs a limited claim may try (candidates.c),
 * for limits.c.
 */
#ifndef MQ_CANDIDATES_H
#define MQ_CANDIDATES_H

#include "internal.h"

/* the job_key column's size */
#define MQ_KEY_MAX 255

struct candidate {
	uint64_t id;
	char key[MQ_KEY_MAX + 1];
	unsigned long key_len;
	int has_key;
};

/* The key limits a candidate's read leaves room for: per_key live
 * leases of a key, key_rate claims of a key in key_rate_us (0: none). */
struct key_limits {
	uint32_t per_key, key_rate;
	uint64_t key_rate_us;
};

/* Whether the key limits held a due job back: one was passed over, or
 * none (every due job was read), or not known (not all were read). */
enum mq_cand_held { MQ_CAND_HELD, MQ_CAND_NONE_HELD, MQ_CAND_UNKNOWN };

/* Due jobs of queue in claim order, up to about 4 for each of the room
 * jobs wanted, less those its key limits hold back by what is live and
 * claimed now (a key's jobs no more than it has room for); *cand
 * (malloc'd, *n of them; free it). */
enum mq_status mq__candidates(struct mq_conn *c, const char *queue,
    const struct key_limits *kl, uint64_t room, struct candidate **cand,
    size_t *n, enum mq_cand_held *held);

/* The queue's settings as the head of the candidates' read saw them
 * (MQ_CAND_SETTINGS): "paused concurrency per_key rate rate_us key_rate
 * key_rate_us" (NULLs as 0); none when the read had no row, or the
 * queue no settings row. */
#define MQ_CAND_SETTINGS 160
struct cand_settings {
	int seen;			/* a row said them */
	int none;			/* the queue has no settings row */
	char text[MQ_CAND_SETTINGS];
};

/* mq__candidates, with the settings the head's rows carry (s); past
 * the head only while fewer than need (<= room) are offered (the rest
 * of room is a prefetch). */
enum mq_status mq__candidates_settings(struct mq_conn *c, const char *queue,
    const struct key_limits *kl, uint64_t room, uint64_t need,
    struct candidate **cand, size_t *n, enum mq_cand_held *held,
    struct cand_settings *s);

#endif
