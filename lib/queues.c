/*
 * queues.c: per-queue operations: pause and resume, and the limits (a
 * row in <table>_queues that the claim checks).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* paused_at keeps the first pause's time (read before paused is set) */
static const char sql_pause[] =
    "INSERT INTO `{{TABLE}}_queues` (queue, paused, paused_at)"
    " VALUES (?, 1, UTC_TIMESTAMP(6)) ON DUPLICATE KEY UPDATE"
    " paused_at = IF(paused, paused_at, UTC_TIMESTAMP(6)), paused = 1";

static const char sql_resume[] =
    "UPDATE `{{TABLE}}_queues` SET paused = 0, paused_at = NULL"
    " WHERE queue = ? AND paused";

/* The limits: each column set (its flag) or kept. A new row has NULL
 * in those not set, as the values bound for them are; paused stays. */
#define LIMIT_SET(col) " " col " = IF(?, ?, " col ")"
static const char sql_limits_set[] =
    "INSERT INTO `{{TABLE}}_queues` (queue, concurrency, per_key, rate,"
    " rate_us, key_rate, key_rate_us) VALUES (?, ?, ?, ?, ?, ?, ?)"
    " ON DUPLICATE KEY UPDATE" LIMIT_SET("concurrency") ","
    LIMIT_SET("per_key") "," LIMIT_SET("rate") "," LIMIT_SET("rate_us") ","
    LIMIT_SET("key_rate") "," LIMIT_SET("key_rate_us");
/* Only clearing: no row is made for a queue that has none (it would
 * stand in mq stats' list of queues). */
#define LIMIT_CLEAR(col) " " col " = IF(?, NULL, " col ")"
static const char sql_limits_clear[] =
    "UPDATE `{{TABLE}}_queues` SET" LIMIT_CLEAR("concurrency") ","
    LIMIT_CLEAR("per_key") "," LIMIT_CLEAR("rate") "," LIMIT_CLEAR("rate_us")
    "," LIMIT_CLEAR("key_rate") "," LIMIT_CLEAR("key_rate_us")
    " WHERE queue = ?";
static const char sql_limits_get[] =
    "SELECT concurrency, per_key, rate, rate_us, key_rate, key_rate_us"
    " FROM `{{TABLE}}_queues` WHERE queue = ?";

/* The limits' columns, in the statements' order. */
#define NLIMITS 6

enum mq_status
mq_set_paused(struct mq_conn *c, const char *queue, int paused, int *changed)
{
	MYSQL_BIND in[1];
	unsigned long qlen;
	MYSQL_STMT *st;
	enum mq_status rc;

	*changed = 0;
	if (!mq_valid_queue(queue))
		return mq__fail(c, MQ_EINVAL, "invalid queue name");
	if ((st = mq__prepare(c, paused ? sql_pause : sql_resume)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], queue, &qlen);
	rc = mq__execute_retry(c, st, in, paused ? "cannot pause queue" :
	    "cannot resume queue");
	/* insert: 1 row, update: 2, already so: 0 */
	if (rc == MQ_OK)
		*changed = mysql_stmt_affected_rows(st) > 0;
	mq__release(c, st);
	if (rc == MQ_OK && !paused && *changed) {
		/* its waiters may claim again now; a failed wakeup is only a
		 * delay of at most a second */
		struct mq_error saved = c->err;
		uint64_t woken;
		if (mq__wake(c, queue, MQ_WAKE_MAX, &woken) != MQ_OK)
			c->err = saved;
	}
	return rc;
}

/* A value of l for column i, widened, with its flag bit in which. */
static uint64_t
limit_value(const struct mq_limits *l, int i)
{
	switch (i) {
	case 0: return l->concurrency;
	case 1: return l->per_key;
	case 2: return l->rate;
	case 3: return l->rate_us;
	case 4: return l->key_rate;
	default: return l->key_rate_us;
	}
}

static const unsigned limit_flag[NLIMITS] = { MQ_LIMIT_CONCURRENCY,
    MQ_LIMIT_PER_KEY, MQ_LIMIT_RATE, MQ_LIMIT_RATE, MQ_LIMIT_KEY_RATE,
    MQ_LIMIT_KEY_RATE };

enum mq_status
mq_limits_set(struct mq_conn *c, const char *queue, unsigned which,
    const struct mq_limits *l)
{
	MYSQL_BIND in[1 + 3 * NLIMITS];
	int32_t set[NLIMITS];
	uint64_t v[NLIMITS];
	unsigned long qlen;
	MYSQL_STMT *st;
	enum mq_status rc;
	int i, k = 0, any = 0;

	if (!mq_valid_queue(queue))
		return mq__fail(c, MQ_EINVAL, "invalid queue name");
	if ((which & ~MQ_LIMIT_ALL) != 0 ||
	    (l->rate == 0) != (l->rate_us == 0) ||
	    (l->key_rate == 0) != (l->key_rate_us == 0))
		return mq__fail(c, MQ_EINVAL, "invalid limits");
	for (i = 0; i < NLIMITS; i++) {
		set[i] = (which & limit_flag[i]) != 0;
		v[i] = set[i] ? limit_value(l, i) : 0;
		any |= v[i] != 0;
	}
	if ((st = mq__prepare(c, any ? sql_limits_set :
	    sql_limits_clear)) == NULL)
		return c->err.status;
	if (any) {
		mq__bind_str(&in[k++], queue, &qlen);
		for (i = 0; i < NLIMITS; i++)
			if (v[i])
				mq__bind_u64(&in[k++], &v[i]);
			else
				mq__bind_null(&in[k++]);
		for (i = 0; i < NLIMITS; i++) {
			mq__bind_i32(&in[k++], &set[i]);
			in[k] = in[1 + i];
			k++;
		}
	} else {
		for (i = 0; i < NLIMITS; i++)
			mq__bind_i32(&in[k++], &set[i]);
		mq__bind_str(&in[k++], queue, &qlen);
	}
	rc = mq__execute_retry(c, st, in, "cannot set the queue's limits");
	mq__release(c, st);
	if (rc == MQ_OK) {
		/* a limit raised or gone: its waiters held back may claim
		 * now; a failed wakeup is only a delay of at most a second */
		struct mq_error saved = c->err;
		uint64_t woken;
		if (mq__wake(c, queue, MQ_WAKE_MAX, &woken) != MQ_OK)
			c->err = saved;
	}
	return rc;
}

enum mq_status
mq_limits_get(struct mq_conn *c, const char *queue, struct mq_limits *l)
{
	MYSQL_BIND in[1], out[NLIMITS];
	mq__bool null[NLIMITS];
	uint64_t v[NLIMITS];
	unsigned long qlen;
	MYSQL_STMT *st;
	enum mq_status rc;
	int i, r = MYSQL_NO_DATA;

	memset(l, 0, sizeof *l);
	if (!mq_valid_queue(queue))
		return mq__fail(c, MQ_EINVAL, "invalid queue name");
	if ((rc = mq__see_cluster(c)) != MQ_OK)
		return rc;
	if ((st = mq__prepare(c, sql_limits_get)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], queue, &qlen);
	memset(out, 0, sizeof out);
	for (i = 0; i < NLIMITS; i++) {
		v[i] = 0;
		mq__bind_u64(&out[i], &v[i]);
		out[i].is_null = &null[i];
	}
	rc = mq__execute(c, st, in, "cannot read the queue's limits");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot read the queue's limits");
	if (rc == MQ_OK) {
		r = mysql_stmt_fetch(st);
		if (r == 1)
			rc = mq__dberr(c, st, "cannot read the queue's limits");
		else if (r != MYSQL_NO_DATA)
			for (i = 0; i < NLIMITS; i++)
				if (null[i])
					v[i] = 0;
	}
	mq__release(c, st);
	if (rc != MQ_OK || r == MYSQL_NO_DATA)
		return rc;
	/* INT UNSIGNED columns, and the windows' BIGINT UNSIGNED */
	l->concurrency = (uint32_t)v[0];
	l->per_key = (uint32_t)v[1];
	/* half a rate (a rate without its window, or a window without
	 * its rate: a row the CHECK did not see) is none, as claims and
	 * mq stats take it (MQ_SQL_LIMITED, stats.c) */
	if (v[2] && v[3]) {
		l->rate = (uint32_t)v[2];
		l->rate_us = mq__window_us(v[3]);
	}
	if (v[4] && v[5]) {
		l->key_rate = (uint32_t)v[4];
		l->key_rate_us = mq__window_us(v[5]);
	}
	return MQ_OK;
}
