/*
 * table.c: part of mq stats and mq ls (documented in mq(1) OUTPUT), not a
 * command: the human tables: every column as wide as its widest cell or
 * its header, so that a long queue name moves the columns after it
 * instead of pushing its own row out of line. The first column is text
 * from the table (put_text: escaped, measured as shown), left-aligned;
 * the others are numbers and units that mq wrote, right-aligned.
 */
#include <stdio.h>
#include <string.h>

#include "output/output.h"

void
table_print(const char *const *head, size_t cols, const struct table_row *r,
    size_t n)
{
	size_t width[TABLE_COLS_MAX] = { 0 }, i, k, w;

	if (cols > TABLE_COLS_MAX)
		cols = TABLE_COLS_MAX;
	for (k = 0; k < cols; k++)
		width[k] = strlen(head[k]);
	for (i = 0; i < n; i++) {
		if ((w = text_width(r[i].name, r[i].name_len)) > width[0])
			width[0] = w;
		for (k = 1; k < cols; k++)
			if ((w = strlen(r[i].cell[k])) > width[k])
				width[k] = w;
	}
	printf("%-*s", (int)width[0], head[0]);
	for (k = 1; k < cols; k++)
		printf(" %*s", (int)width[k], head[k]);
	putchar('\n');
	for (i = 0; i < n; i++) {
		w = put_text(stdout, r[i].name, r[i].name_len);
		printf("%*s", (int)(width[0] - w), "");
		for (k = 1; k < cols; k++)
			printf(" %*s", (int)width[k], r[i].cell[k]);
		putchar('\n');
	}
}
