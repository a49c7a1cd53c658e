/*
 * claim.h: what the two ways of claiming (pop.c) share with the claim of
 * a Galera node's share (claim.c): the claim's state and its SET part.
 */
#ifndef MQ_CLAIM_H
#define MQ_CLAIM_H

#include "internal.h"
#include "sql_terms.h"

/* attempts + 1 stops at the column's top, and max_attempts is raised to
 * at least the attempts: a row written by another program (max_attempts
 * 0, attempts used up: refused by schema 6's CHECKs, not by an older
 * server, nor where someone turned the checks off) is delivered once
 * more, then buried by fail or requeue-stale, as any other. An
 * out-of-range error, or a CHECK failing, would instead fail every claim
 * of the queue behind that row. (Left to right: max_attempts reads the
 * new attempts.) */
#define NEXT_ATTEMPT \
    "attempts = LEAST(attempts, 4294967294) + 1," \
    " max_attempts = GREATEST(max_attempts, attempts)"

/* What a claim writes, in both ways of claiming: a new delivery with its
 * fresh token (the receipt's fence), its deadline and its holder. Binds
 * token, lease length and host:pid (bind_lease). */
#define CLAIM_SET \
    " SET state = 'leased', " NEXT_ATTEMPT "," \
    " lease_token = ?, leased_until = " MQ_SQL_NOW_PLUS_US "," \
    " leased_by = ?"

struct claim {
	const struct mq_receipt *acks;	/* acked in the claim's transaction */
	size_t nacks;
	unsigned char *lost;
	const struct mq_pop_opts *o;
	char queues[MQ_QUEUES_MAX][MQ_QUEUE_MAX + 1];
	size_t nqueues;
	char token[MQ_TOKEN_LEN + 1];
	struct mq_job *jobs;
	size_t n;
	int share;		/* only the node's share (Galera) */
	uint64_t share_bind[5];	/* step, nodes, step * nodes, nodes, index */
	int left;		/* a waiter's rows went in the claim (Galera) */
	int limited[MQ_QUEUES_MAX];	/* the queue has limits (limits.c) */
	/* the queue's paused flag as its limited claim read it (-1: not
	 * read): an empty claim's answer (paused or empty) */
	int paused[MQ_QUEUES_MAX];
	int gated;		/* a limited queue's gates are written in
				 * this transaction */
	unsigned char deferred[MQ_QUEUES_MAX];	/* short after that: claimed
				 * in a transaction of its own */
};

/* A connection's memory of queues, by name (struct mq_conn's *_seen):
 * whether queue is in it; puts it in (in) or takes it out. */
int mq__seen_in(char (*seen)[MQ_QUEUE_MAX + 1], const char *queue);
void mq__note_in(char (*seen)[MQ_QUEUE_MAX + 1], const char *queue, int in);

/* Reads the rows of an executed claim SELECT, after those in cl->jobs. */
enum mq_status mq__claim_fetch(struct mq_conn *c, MYSQL_STMT *st,
    struct claim *cl);

/* Binds token, lease length and host:pid: the SET part of a claim. */
void mq__claim_bind_lease(struct mq_conn *c, struct claim *cl,
    MYSQL_BIND *b, unsigned long *len, int64_t *lease);

/* Galera, SKIP LOCKED (in the claim's transaction): up to limit jobs of
 * the node's share of queue, appended to cl->jobs. */
enum mq_status mq__claim_share_locked(struct mq_conn *c, struct claim *cl,
    const char *queue, uint32_t limit);

/* Galera, UPDATE claims: up to limit jobs of the node's share of queue,
 * leased with cl->token by primary key; *got of them. */
enum mq_status mq__claim_share_update(struct mq_conn *c, struct claim *cl,
    const char *queue, uint32_t limit, uint64_t *got);

/* Whether queue has a due job, paused or not (limits.c): the update
 * claim's guard, a statement of its own (MySQL, and MariaDB before
 * 10.3.2, refuse a subquery on the table an UPDATE writes), and what a
 * short limited claim asks when a queue-wide limit is full. */
extern const char mq__sql_any_due[];

/* In the claim's transaction: up to want jobs of queue that its limits
 * allow now (limits.c), appended to cl->jobs, locked, not yet leased
 * (the caller leases them with the claim's others). *limited 1 if the
 * queue has limits (else nothing was taken: the plain claim's jobs are
 * all there are); *paused 1 if it is paused, as read with them (an
 * empty claim says so without a read more). skip_locked: the server
 * has SKIP LOCKED. */
enum mq_status mq__claim_limited(struct mq_conn *c, struct claim *cl,
    const char *queue, uint32_t want, int skip_locked, int *limited,
    int *paused);

#endif
