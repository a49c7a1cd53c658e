/*
 * inspect.h: what the readers of jobs for operators share (inspect.c: one
 * job; inspect_list.c: lists; inspect_row.c: a row of either table).
 */
#ifndef MQ_INSPECT_H
#define MQ_INSPECT_H

#include "internal.h"
#include "sql_terms.h"

/* The columns both tables give, in the order fetch_row binds them; the
 * archive has no recurrence and gives when it was archived. Unqualified
 * columns are the read table's (alias j). */
#define JOB_COLS(archived, shown, every, anchor, archived_at, payload, \
    policy, related) \
    "SELECT " archived ", id, queue, " shown ", CAST(state AS CHAR)," \
    " priority, attempts, max_attempts, " \
    MQ_SQL_ISO("created_at") ", " MQ_SQL_AGE_FROM_NOW("created_at") ", " \
    MQ_SQL_ISO("available_at") ", " MQ_SQL_AGE_FROM_NOW("available_at") \
    ", " MQ_SQL_ISO("leased_until") ", " \
    MQ_SQL_AGE_FROM_NOW("leased_until") ", leased_by, " \
    MQ_SQL_ISO("finished_at") ", " MQ_SQL_AGE_FROM_NOW("finished_at") \
    ", last_error, " every ", " archived_at ", " \
    "NOT (" MQ_SQL_NOT_PAUSED("{{TABLE}}", "j.queue") "), dedup_key, " \
    payload ", " MQ_SQL_EPOCH_US("available_at") \
    ", lease_token IS NOT NULL, " MQ_SQL_ISO(anchor) ", job_key, " policy ", " related

#define LIVE_COLS(payload) \
    JOB_COLS("0", MQ_SQL_SHOWN_STATE, "every_us", "every_anchor", "NULL", \
    payload, "CAST(if_parent_dies AS CHAR)", \
    "children IS NOT NULL OR parent_shards IS NOT NULL")
#define ARCHIVE_COLS(payload) \
    JOB_COLS("1", "'archived'", "NULL", "NULL", \
    MQ_SQL_ISO("archived_at"), payload, "NULL", "1")
#define FROM_LIVE " FROM `{{TABLE}}` j"
#define FROM_ARCHIVE " FROM `{{TABLE}}_archive` j"

/* the condition of each state but archived, in the job table */
extern const char *const mq__state_sql[MQ_ST_ARCHIVED];

#define NCOLS 29

/* What fetch_row binds the columns to. */
struct row {
	MYSQL_BIND out[NCOLS];
	mq__bool null[NCOLS];
	unsigned long len[NCOLS];
	int32_t archived, paused, token, related;
	char shown[16], stored[16];
	char iso[5][MQ_ISO_SIZE + 8], anchor[MQ_ISO_SIZE + 8], policy[8];
	int64_t diff[4], every;
	struct mq_job_info j;
};

/* Binds r's columns for mysql_stmt_bind_result. */
void mq__inspect_bind_row(struct row *r);

/* The fetched row into r->j, with its error and payload (malloc'ed). */
enum mq_status mq__inspect_finish_row(struct mq_conn *c, MYSQL_STMT *st,
    struct row *r);

#endif
