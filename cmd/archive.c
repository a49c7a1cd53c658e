/*
 * archive.c: mq archive: move finished jobs older than D out of the job
 * table into <table>_archive, or delete them, in short transactions.
 */
#include <stdio.h>

#include "cmds.h"

static const char usage[] =
    "usage: mq archive [--older-than D] [--batch N] [--dead] [--purge]"
    " [--quiet] [--table T] [CONNECTION-OPTIONS]";

static const char options[] =
    "\noptions:\n"
    "  --older-than D      finished longer ago than D (default 7d)\n"
    "  --batch N           jobs per transaction (default 500)\n"
    "  --dead              dead jobs too, not only done ones\n"
    "  --purge             delete them instead of moving them\n"
    "  --quiet             no count on standard output, no progress\n";

int
cmd_archive(int argc, char **argv, struct mq_global *g)
{
	enum { OPT_OLDER = OPT_CMD, OPT_BATCH, OPT_DEAD, OPT_PURGE,
	    OPT_QUIET };
	static const struct option longopts[] = {
		{"older-than", required_argument, NULL, OPT_OLDER},
		{"batch", required_argument, NULL, OPT_BATCH},
		{"dead", no_argument, NULL, OPT_DEAD},
		{"purge", no_argument, NULL, OPT_PURGE},
		{"quiet", no_argument, NULL, OPT_QUIET},
		CONNECTION_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	struct mq_archive_opts o = { .older_than_us = 7 * 86400000000LL,
	    .batch = 500 };
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;
	struct progress p;
	uint64_t moved;
	int opt, quiet = 0;

	while ((opt = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		if (common_option("archive", opt, optarg, g))
			continue;
		switch (opt) {
		case OPT_OLDER:
			o.older_than_us = duration_arg("archive",
			    "--older-than", optarg);
			break;
		case OPT_BATCH:
			o.batch = (unsigned)int_arg("archive", "--batch", optarg,
			    1, 10000);
			break;
		case OPT_DEAD:	o.dead = 1; break;
		case OPT_PURGE:	o.purge = 1; break;
		case OPT_QUIET:	quiet = 1; break;
		case 'h':
			help_exit(usage, options);
			break;
		default:
			bad_option("archive", opt, argv);
		}
	}
	settle("archive", g, 0);
	if (optind < argc)
		usage_error("archive", "unexpected argument '%s'",
		    shown(argv[optind]));

	c = open_queue_table("archive", g);
	progress_start(&p, "archive", o.purge ? "purged" : "archived", quiet);
	o.progress = progress_jobs;
	o.progress_arg = &p;
	st = mq_archive(c, &o, &moved);
	progress_clear(&p);
	e = *mq_conn_error(c);
	mq_close(c);
	/* what was moved stays moved, also when a later batch failed: said
	 * then even if quiet */
	if (!quiet || st != MQ_OK)
		printf("%s %llu job%s\n", o.purge ? "purged" : "archived",
		    (unsigned long long)moved, PLURAL(moved));
	if (st != MQ_OK)
		die("archive", &e);
	return 0;
}
