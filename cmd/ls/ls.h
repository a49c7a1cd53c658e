/*
 * ls.h: mq ls's table (ls/table.c): the rows kept until every column's
 * width is known.
 */
#ifndef MQ_LS_H
#define MQ_LS_H

#include "commands.h"
#include "output/output.h"

/* One job as the table shows it: cells mq wrote, and text from the
 * table (queue, leased_by, error) kept as bytes, shown escaped. */
struct ls_row {
	char id[24], state[12], prio[8], attempt[24], age[24];
	char when[24 + 8];
	unsigned char queue[MQ_QUEUE_MAX];
	size_t queue_len;
	unsigned char by[256];
	size_t by_len;
	unsigned char *error;	/* malloc'ed, NULL: none */
	size_t error_len;
	int error_cut;		/* error holds its first bytes only */
};

struct ls_rows {
	struct ls_row *r;
	size_t n, cap;
	size_t width;		/* the terminal's columns (0: no limit) */
};

/* The terminal's columns: stdout's window, else $COLUMNS; 0: no limit. */
size_t ls_term_width(void);

/* Adds j; -1 when out of memory. */
int ls_rows_add(struct ls_rows *rows, const struct mq_job_info *j);
void ls_rows_free(struct ls_rows *rows);

/* The table, the last error cut to the terminal's width (mq-ls(1)). */
void ls_table_print(const struct ls_rows *rows);

#endif
