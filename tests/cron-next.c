/*
 * cron-next.c: lib's next runs (cron.h) for a script to drive, built
 * for the tests only (t360 compares them with python3-croniter). Reads
 * lines "EXPR<TAB>ZONE<TAB>T" on stdin, T an instant in seconds since
 * 1970 UTC and ZONE a zone name ("UTC" built in), and writes one line
 * for each, in order:
 *   "runs R1 R2 ... Rk": the first N runs strictly after T, each the
 *       next after the one before (k < N when none is left before the
 *       end of 9999);
 *   "refused MESSAGE": mq_cron_parse's or mq_tz_load's message;
 *   "error MESSAGE": a line that is not three fields, or another
 *       status.
 * usage: cron-next [N]   (N: 1 to 100 runs a line, default 5)
 * The output is flushed after each line, so a script may talk to it
 * line by line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cron.h"

int
main(int argc, char **argv)
{
	char line[4096], zone[MQ_TZ_NAME_MAX + 1] = "";
	struct mq_tz *tz = NULL;
	int nruns = argc > 1 ? atoi(argv[1]) : 5;

	if (nruns < 1 || nruns > 100) {
		fprintf(stderr, "usage: cron-next [N]   (N: 1 to 100)\n");
		return 2;
	}
	while (fgets(line, sizeof line, stdin) != NULL) {
		char *expr = line, *z, *ts, *end;
		struct mq_cron c;
		struct mq_error e;
		enum mq_status st = MQ_OK;
		int64_t t;
		int k;

		line[strcspn(line, "\n")] = '\0';
		if ((z = strchr(expr, '\t')) == NULL ||
		    (ts = strchr(z + 1, '\t')) == NULL) {
			printf("error not EXPR<TAB>ZONE<TAB>T\n");
			fflush(stdout);
			continue;
		}
		*z++ = '\0';
		*ts++ = '\0';
		t = strtoll(ts, &end, 10);
		if (end == ts || *end != '\0') {
			printf("error T is not a number\n");
			fflush(stdout);
			continue;
		}
		if (mq_cron_parse(expr, &c, &e) != MQ_OK) {
			printf("refused %s\n", e.msg);
			fflush(stdout);
			continue;
		}
		if (tz == NULL || strcmp(zone, z) != 0) {
			mq_tz_free(tz);
			tz = NULL;
			zone[0] = '\0';
			if (mq_tz_load(z, NULL, &tz, &e) != MQ_OK) {
				printf("refused %s\n", e.msg);
				fflush(stdout);
				continue;
			}
			snprintf(zone, sizeof zone, "%s", z);
		}
		printf("runs");
		for (k = 0; k < nruns; k++) {
			st = mq_cron_next(&c, tz, t, &t);
			if (st != MQ_OK)
				break;
			printf(" %" PRId64, t);
		}
		if (st != MQ_OK && st != MQ_EMPTY)
			printf(" error status %d", (int)st);
		putchar('\n');
		fflush(stdout);
	}
	mq_tz_free(tz);
	return 0;
}
