/*
 * yield.c: bulk work that gives way to the consumers. Archive and retry
 * move many rows, and nothing they do is urgent while claims are: after
 * each batch they ask the server's row counters whether others wrote
 * meanwhile, and if so pause for five times the batch's time, for a
 * second after others were last seen. Nobody else: no pause.
 *
 * Five times: on a 2-core machine whose consumers use both cores (300k
 * rows archived, median of 3 to 8 runs) consumers lost 34% at 1.5x, 14%
 * at 3x, 8% at 5x, with the server's purge and flushing adding up to 25%
 * either way.
 */
#include <stdlib.h>

#include "internal.h"

/* Rows others may write between two looks without counting as work (a
 * stray statistics update, a heartbeat), and how long the work stays
 * gentle after it last saw others' writes. */
#define OTHERS_ROWS 2
#define BUSY_MEMORY_US 1000000
#define PAUSE_FACTOR 5

/* Rows written in InnoDB tables by every session since the server
 * started (a status read: no privilege needed); 0 if unreadable. */
static uint64_t
rows_written(struct mq_conn *c)
{
	static const char sql[] = "SHOW GLOBAL STATUS WHERE Variable_name IN"
	    " ('Handler_write', 'Handler_update',"
	    " 'Handler_delete')";
	MYSQL_RES *res;
	MYSQL_ROW row;
	uint64_t n = 0;

	if (mysql_real_query(c->db, sql, sizeof sql - 1) != 0)
		return 0;
	if ((res = mysql_store_result(c->db)) == NULL)
		return 0;
	while ((row = mysql_fetch_row(res)) != NULL)
		if (row[1])
			n += strtoull(row[1], NULL, 10);
	mysql_free_result(res);
	return n;
}

void
mq__yield_start(struct mq_conn *c, struct mq__yield *y)
{
	y->written = rows_written(c);
	y->busy_at = INT64_MIN / 2;
}

int64_t
mq__yield_pause(struct mq_conn *c, struct mq__yield *y, int64_t t0,
    uint64_t own)
{
	int64_t now = mq_now_us();
	uint64_t w = rows_written(c);

	/* others at work: rows written beyond the batch's own since the
	 * last look (or no reading at all) */
	if (w == 0 || w - y->written > own + OTHERS_ROWS)
		y->busy_at = now;
	y->written = w;
	return now - y->busy_at < BUSY_MEMORY_US ? (now - t0) * PAUSE_FACTOR :
	    0;
}
