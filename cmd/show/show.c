/*
 * show.c: mq show: jobs whole, one after another: every field, the
 * payload (an escaped preview, raw to a file, or in JSON) and the
 * history of its attempts; archived jobs too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "show.h"

enum { OPT_JSON = OPT_CMD, OPT_OUTPUT };

static const struct opt opts[] = {
	{ OPT_JSON, "json", 0, NULL, "one JSON object per job, per line",
	    COMPLETE_NONE, NULL, NULL, 0, 0 },
	{ OPT_OUTPUT, "output", 'o', "FILE", "the raw payload to FILE "
	    "(- : standard output);\none ID only", COMPLETE_FILE, NULL,
	    "[-o FILE]", 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command show_command = {
	"show", "one job whole: fields, payload, history", opts,
	{ "ID...", NULL }, CMD_READS_ONLY, cmd_show,
	NULL
};

struct args {
	int json;
	const char *path;	/* -o */
};

static void
option(void *ctx, int id, const char *arg)
{
	struct args *a = ctx;

	if (id == OPT_JSON)
		a->json = 1;
	else if (id == OPT_OUTPUT)
		a->path = arg;
}

/* The payload, raw, to path ("-": stdout); 0 or the exit status. */
static int
write_payload(const struct mq_job_info *j, const char *path)
{
	int out_is_stdout = strcmp(path, "-") == 0;
	FILE *f = stdout;

	if (!out_is_stdout && (f = fopen(path, "wb")) == NULL) {
		say(&show_command, "cannot write '%s': %s",
		    shown(path), strerror(errno));
		return EX_CANTCREAT;
	}
	int bad = fwrite(j->payload, 1, j->payload_len, f) !=
	    j->payload_len;
	int err = bad ? errno : 0;

	if (out_is_stdout && bad)
		stdout_error(err);
	if (bad || (out_is_stdout ? flush_stdout() != 0 : fclose(f) != 0)) {
		if (out_is_stdout)
			return stdout_failure(&show_command);
		if (err == 0)
			err = errno;
		say(&show_command, "write failure on %s: %s", shown(path),
		    strerror(err ? err : EIO));
		if (bad)
			fclose(f);
		return EX_IOERR;
	}
	return 0;
}

/* One job: read, history, printed (after a blank line unless first);
 * 0, or 1 if there is no such job. */
static int
show_one(struct mq_conn *c, uint64_t id, const struct args *a, int first)
{
	struct mq_job_info j;
	struct mq_job_deps d;
	enum mq_status st;
	int rc = 0, events = 0;

	st = mq_job_get(c, id, &j);
	if (st == MQ_EMPTY) {
		say(&show_command, "job %llu: no such job",
		    (unsigned long long)id);
		return 1;
	}
	if (st != MQ_OK)
		die(&show_command, mq_conn_error(c));
	if (a->path && (rc = write_payload(&j, a->path)) != 0) {
		mq_job_info_free(&j);
		mq_close(c);
		exit(rc);
	}
	if (a->path && strcmp(a->path, "-") == 0) {
		mq_job_info_free(&j);
		return 0;
	}
	memset(&d, 0, sizeof d);
	if (j.may_have_deps && (st = mq_job_deps(c, id, &d)) != MQ_OK) {
		mq_job_info_free(&j);
		die(&show_command, mq_conn_error(c));
	}
	if (a->json)
		show_json_start(&j, &d);
	else
		show_text(&j, &d, a->path, first);
	st = mq_job_history(c, id, a->json ? show_json_event :
	    show_text_event, &events);
	if (st != MQ_OK)
		die(&show_command, mq_conn_error(c));
	if (a->json)
		putchar(']');
	else if (events == 0)
		printf("  none\n");
	if (show_run(c, id, a->json) != 0)
		die(&show_command, mq_conn_error(c));
	if (a->json)
		printf("}\n");
	mq_job_info_free(&j);
	return 0;
}

int
cmd_show(int argc, char **argv, struct mq_global *g)
{
	struct args a = { 0, NULL };
	struct mq_conn *c;
	uint64_t *ids;
	int i, n, missing = 0, any = 0;

	n = parse_options(&show_command, argc, argv, g, option, &a);
	settle(&show_command, g, 0);
	if (n < 1)
		usage_error(&show_command, "a job ID expected");
	if (a.path && n > 1)
		usage_error(&show_command, "-o writes the payload of one job: "
		    "one ID expected, not %d", n);
	if (a.path && a.json && strcmp(a.path, "-") == 0)
		usage_error(&show_command, "--json and -o - both write standard "
		    "output");
	if (a.path && *a.path == '\0')
		usage_error(&show_command, "-o: a file name expected");
	if ((ids = malloc((size_t)n * sizeof *ids)) == NULL) {
		return no_memory(&show_command);
	}
	for (i = 0; i < n; i++)
		if (parse_id(argv[i + 1], &ids[i]) != 0)
			usage_error(&show_command, "invalid job id '%s': a positive "
			    "number, as push prints it", shown(argv[i + 1]));
	/* a payload sent to a closed stdout would be lost unseen */
	if (a.path && strcmp(a.path, "-") == 0)
		need_stdio(&show_command, STDOUT_CLOSED);

	c = open_queue_table(&show_command, g);
	for (i = 0; i < n; i++) {
		if (show_one(c, ids[i], &a, !any) != 0)
			missing = 1;
		else
			any = 1;
	}
	mq_close(c);
	free(ids);
	return missing ? EXIT_EMPTY : 0;
}
