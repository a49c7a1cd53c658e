/*
 * gates.c: the gates of limited queues (<table>_gates; mq-queue(7)
 * LIMITS): the row a claim writes per queue or key before it counts
 * what its limits allow (limits.c), and that an extend writes before it
 * extends a lease those limits count (lease.c). The write puts the two
 * in one order: on one server its row lock, on a Galera cluster its
 * certification.
 */
#include <string.h>

#include "internal.h"
#include "sql_terms.h"

/* the job_key column's size */
#define KEY_MAX 255

/* The gate of a queue ('') or of a key: written, so that the claims of
 * one gate are in one order (see above). */
static const char sql_gate[] =
    "INSERT INTO `{{TABLE}}_gates` (queue, gate_key, claims)"
    " VALUES (?, ?, 1) ON DUPLICATE KEY UPDATE claims = claims + 1";

/* Writes the gate of queue (key NULL: the queue's own). */
enum mq_status
mq__gate(struct mq_conn *c, const char *queue, const char *key,
    unsigned long key_len)
{
	MYSQL_BIND in[2];
	unsigned long qlen, klen = key ? key_len : 0;
	MYSQL_STMT *st;
	enum mq_status rc;

	if ((st = mq__prepare(c, sql_gate)) == NULL)
		return c->err.status;
	mq__bind_str(&in[0], queue, &qlen);
	mq__bind_blob(&in[1], key ? key : "", &klen);
	rc = mq__execute(c, st, in, "cannot claim (limit's gate)");
	mq__release(c, st);
	return rc;
}

/* A job's queue and key, and the limits that count its lease. */
static const char sql_job_limits[] =
    "SELECT j.queue, j.job_key, l.concurrency, l.per_key"
    " FROM `{{TABLE}}` AS j FORCE INDEX (PRIMARY)"
    " LEFT JOIN `{{TABLE}}_queues` AS l ON l.queue = j.queue"
    " WHERE j.id = ?";

enum mq_status
mq__gate_job(struct mq_conn *c, uint64_t id)
{
	MYSQL_BIND in[1], out[4];
	char queue[MQ_QUEUE_MAX + 1], key[KEY_MAX + 1];
	unsigned long qlen = 0, klen = 0;
	mq__bool qnull = 1, knull = 1, cnull = 1, pnull = 1;
	uint32_t conc = 0, per = 0;
	MYSQL_STMT *st;
	enum mq_status rc;
	int f, found = 0;

	if ((st = mq__prepare(c, sql_job_limits)) == NULL)
		return c->err.status;
	mq__bind_u64(&in[0], &id);
	memset(out, 0, sizeof out);
	mq__bind_text_out(&out[0], queue, sizeof queue, &qlen, &qnull);
	mq__bind_text_out(&out[1], key, sizeof key, &klen, &knull);
	mq__bind_u32(&out[2], &conc);
	out[2].is_null = &cnull;
	mq__bind_u32(&out[3], &per);
	out[3].is_null = &pnull;
	rc = mq__execute(c, st, in, "cannot read the job's limits");
	if (rc == MQ_OK && mysql_stmt_bind_result(st, out) != 0)
		rc = mq__dberr(c, st, "cannot read the job's limits");
	if (rc == MQ_OK) {
		f = mysql_stmt_fetch(st);
		if (f == 1)
			rc = mq__dberr(c, st, "cannot read the job's limits");
		else if (f != MYSQL_NO_DATA) {
			found = !qnull;
			mysql_stmt_free_result(st);
		}
	}
	mq__release(c, st);
	if (rc != MQ_OK || !found)
		return rc;
	queue[qlen < MQ_QUEUE_MAX ? qlen : MQ_QUEUE_MAX] = '\0';
	if (!cnull && conc >= 1 && (rc = mq__gate(c, queue, NULL, 0)) != MQ_OK)
		return rc;
	if (!pnull && per >= 1 && !knull && klen > 0)
		rc = mq__gate(c, queue, key, klen < KEY_MAX ? klen : KEY_MAX);
	return rc;
}
