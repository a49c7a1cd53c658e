/*
 * ack.c: finishing jobs (or, for a recurring job, scheduling its next run). Every write after a claim is fenced by the
 * lease token: a consumer whose lease was lost (expired and requeued,
 * claimed again, or already acked) cannot finish someone else's delivery.
 */
#include <string.h>

#include "internal.h"

/* A recurring job is not done but due again: at the first slot
 * every_anchor + k * every_us after now. Slots count from the anchor, not
 * from the ack, so the schedule does not drift; a job that fell behind
 * by several periods runs once, at the next slot, not once per missed
 * one. Each run starts with fresh attempts. (MySQL assigns left to
 * right: every IF reads every_us, which no assignment changes.) */
static const char sql_ack[] =
    "UPDATE `{{TABLE}}` SET"
    " state = IF(every_us IS NULL, 'done', 'ready'),"
    " finished_at = IF(every_us IS NULL, UTC_TIMESTAMP(6), NULL),"
    " available_at = IF(every_us IS NULL, available_at,"
    "   every_anchor + INTERVAL GREATEST(0, FLOOR(TIMESTAMPDIFF(MICROSECOND,"
    "   every_anchor, UTC_TIMESTAMP(6)) / every_us) + 1) * every_us MICROSECOND),"
    " attempts = IF(every_us IS NULL, attempts, 0),"
    " leased_until = NULL"
    " WHERE id = ? AND lease_token = ? AND state = 'leased'";

struct ack {
	const struct mq_receipt *r;
	size_t n;
	unsigned char *lost;
};

static enum mq_status
ack_tx(struct mq_conn *c, void *ctx)
{
	struct ack *a = ctx;

	return mq__ack_in_tx(c, a->r, a->n, a->lost);
}

enum mq_status
mq__ack_in_tx(struct mq_conn *c, const struct mq_receipt *r, size_t n,
    unsigned char *lost)
{
	MYSQL_BIND in[2];
	unsigned long tlen;
	uint64_t id;
	MYSQL_STMT *st;
	enum mq_status rc = MQ_OK;
	size_t i;

	if (n == 0)
		return MQ_OK;
	if ((st = mq__prepare(c, sql_ack)) == NULL)
		return c->err.status;
	for (i = 0; i < n && rc == MQ_OK; i++) {
		id = r[i].id;
		mq__bind_u64(&in[0], &id);
		mq__bind_str(&in[1], r[i].token, &tlen);
		rc = mq__execute(c, st, in, "cannot ack");
		lost[i] = rc == MQ_OK && mysql_stmt_affected_rows(st) != 1;
	}
	mq__release(c, st);
	return rc;
}

enum mq_status
mq_ack(struct mq_conn *c, const struct mq_receipt *r, size_t n,
    unsigned char *lost)
{
	struct ack a = { r, n, lost };
	enum mq_status rc;
	size_t i;

	memset(lost, 0, n);
	if (n == 1) {
		/* one UPDATE commits by itself: no START/COMMIT round trips */
		for (i = 0;; i++) {
			rc = mq__ack_in_tx(c, r, 1, lost);
			if (rc != MQ_ERETRY || i + 1 >= MQ_RETRIES)
				break;
			mq__backoff((unsigned)i);
		}
	} else {
		rc = mq__in_tx(c, ack_tx, &a);
	}
	if (rc != MQ_OK)
		return rc;
	for (i = 0; i < n; i++)
		if (lost[i])
			return mq__fail(c, MQ_ELEASE, "lease lost");
	return MQ_OK;
}
