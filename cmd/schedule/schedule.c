/*
 * schedule.c: mq schedule: calendar schedules (mq-schedule(1)): apply a
 * schedule file (mq-schedule(5)) to the table, list the schedules, run
 * one now, remove one, fire the due ones.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "commands.h"
#include "output/output.h"
#include "schedule/sched.h"

enum { OPT_PRUNE = OPT_CMD, OPT_DRY_RUN, OPT_COUNT, OPT_JSON };

static const struct opt opts[] = {
	{ OPT_PRUNE, "prune", 0, NULL,
	    "apply: remove the schedules the file does not name",
	    COMPLETE_NONE, NULL, NULL, FORM(0), 0 },
	{ OPT_DRY_RUN, "dry-run", 0, NULL,
	    "apply: say what would change, change nothing", COMPLETE_NONE,
	    NULL, NULL, FORM(0), 0 },
	{ OPT_COUNT, "next", 'n', "N",
	    "ls: the next N instants of each schedule (default 3)",
	    COMPLETE_NONE, NULL, NULL, FORM(1), 0 },
	{ OPT_JSON, "json", 0, NULL, "ls: one JSON object a schedule",
	    COMPLETE_NONE, NULL, NULL, FORM(1), 0 },
	{ OPT_QUEUE, "queue", 0, "Q",
	    "fire: only the schedules of these queues (a list: a,b)",
	    COMPLETE_QUEUES, NULL, NULL, FORM(3), 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command schedule_command = {
	"schedule", "calendar schedules: apply a file, list, run, fire", opts,
	{ "apply FILE", "ls", "run NAME | rm NAME", "fire" },
	CMD_QUEUE_LIST, cmd_schedule, NULL
};

struct sched_args {
	int prune, dry_run, json, queue;
	unsigned count;
	int count_given;
};

static void
option(void *ctx, int id, const char *arg)
{
	struct sched_args *a = ctx;

	switch (id) {
	case OPT_PRUNE:		a->prune = 1; break;
	case OPT_DRY_RUN:	a->dry_run = 1; break;
	case OPT_JSON:		a->json = 1; break;
	case OPT_QUEUE:		a->queue = 1; break;
	case OPT_COUNT:
		a->count = (unsigned)int_arg(&schedule_command, "--next", arg, 0,
		    1000);
		a->count_given = 1;
		break;
	}
}

/* The file's bytes (FILE "-": standard input), at most MQ_SCHEDFILE_MAX;
 * exits 66 if it cannot be read, 65 if it is too large. */
static char *
read_file(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	size_t cap = 65536, n = 0, got;
	char *buf = NULL, *nb;
	struct stat st;

	if (f == NULL) {
		say(&schedule_command, "cannot open %s: %s", shown(path),
		    strerror(errno));
		exit(EX_NOINPUT);
	}
	/* a file's size: read into that much, not twice as much (the last
	 * doubling, to find its end) */
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size >= 0 && (uintmax_t)st.st_size < MQ_SCHEDFILE_MAX)
		cap = (size_t)st.st_size + 1;
	for (;;) {
		if (n == cap || buf == NULL) {
			if (buf)
				cap *= 2;
			if ((nb = realloc(buf, cap + 1)) == NULL)
				exit(no_memory(&schedule_command));
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (n > MQ_SCHEDFILE_MAX) {
			say(&schedule_command, "%s: larger than %u bytes",
			    shown(path), MQ_SCHEDFILE_MAX);
			exit(EX_DATAERR);
		}
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		say(&schedule_command, "cannot read %s: %s", shown(path),
		    strerror(errno));
		exit(EX_NOINPUT);
	}
	if (f != stdin)
		fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* The directory of path (payload-file names are relative to it):
 * malloc'd, NULL for standard input or a bare name. */
static char *
dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *d;

	if (strcmp(path, "-") == 0 || slash == NULL)
		return NULL;
	if (slash == path)
		return strdup("/");
	if ((d = malloc((size_t)(slash - path) + 1)) == NULL)
		exit(no_memory(&schedule_command));
	memcpy(d, path, (size_t)(slash - path));
	d[slash - path] = '\0';
	return d;
}

/* A parser's message on stderr, one line: its text as the file has it
 * (backslashes are the file's escapes, as mq-schedule(5) writes them),
 * but a control byte (a tab quoted from a value) as \t or \xHH. */
static void
put_file_message(FILE *f, const char *msg)
{
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
		if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	fputc('\n', f);
}

static void
put_changed(unsigned changed)
{
	unsigned i;
	int first = 1;

	for (i = 0; i < MQ_SCHED_FIELDS; i++)
		if (changed & (1u << i)) {
			printf("%s%s", first ? " " : ", ",
			    mq_schedule_field_name(1u << i));
			first = 0;
		}
}

static int
do_apply(struct mq_global *g, const struct sched_args *a, const char *path)
{
	static const char *const verbs[] = { "added", "changed", "unchanged",
	    "removed" };
	struct mq_schedset *set = NULL;
	struct mq_apply_results *applied = NULL;
	struct mq_apply_result r;
	struct mq_error e;
	struct mq_conn *c;
	size_t len, nres, i;
	char *text = read_file(path, &len), *dir = dir_of(path);
	char utc[INSTANT_MAX], local[INSTANT_MAX];
	enum mq_status st;

	memset(&e, 0, sizeof e);
	/* the file's bytes go once parsed: the set holds what it says,
	 * in a few times its size (mq_schedfile_parse) */
	st = mq_schedfile_parse(text, len, dir, &set, &e);
	free(text);
	free(dir);
	if (st != MQ_OK) {
		struct err_line l;
		FILE *f = err_line_begin(&l);

		fprintf(f, "mq schedule: %s: ", shown(path));
		put_file_message(f, e.msg);
		err_line_end(&l);
		exit(st == MQ_ENOMEM ? EX_OSERR : st == MQ_EIO ? EX_NOINPUT :
		    EX_DATAERR);
	}
	c = open_queue_table(&schedule_command, g);
	st = mq_schedule_apply(c, set, a->prune, a->dry_run, &applied);
	e = *mq_conn_error(c);
	mq_close(c);
	if (st != MQ_OK)
		die(&schedule_command, &e);
	nres = mq_apply_results_count(applied);
	for (i = 0; i < nres; i++) {
		mq_apply_results_get(applied, i, &r);
		printf("%s ", verbs[r.what]);
		put_text(stdout, (const unsigned char *)r.name, strlen(r.name));
		if (r.what == MQ_APPLIED_CHANGED) {
			putchar(':');
			put_changed(r.changed);
		}
		if (r.what != MQ_APPLIED_REMOVED) {
			if (r.next_at >= MQ_SCHEDULE_NEVER)
				printf(" (never fires again)");
			else {
				fmt_instant(r.next_at, NULL, utc, local);
				printf(" (next %s)", utc);
			}
		}
		putchar('\n');
	}
	if (a->dry_run)
		printf("dry run: nothing was written\n");
	mq_apply_results_free(applied);
	mq_schedset_free(set);
	/* a dry run only reads: its reader gone, it ends by SIGPIPE
	 * (mq(1) OUTPUT) */
	if (a->dry_run)
		return flush_read_only() == 0 ? 0 : EX_IOERR;
	return flush_stdout() == 0 ? 0 : EX_IOERR;
}

static int
do_ls(struct mq_global *g, const struct sched_args *a)
{
	struct sched_lister *l = sched_lister_new(a->count_given ? a->count :
	    3, a->json);
	struct mq_error e;
	struct mq_conn *c = open_queue_table(&schedule_command, g);
	enum mq_status st;

	/* a page of rows at a time, each printed as it comes: its memory
	 * is a page's, whatever the table holds */
	st = mq_schedule_list(c, sched_list_row, l);
	e = *mq_conn_error(c);
	mq_close(c);
	sched_lister_free(l);
	if (st != MQ_OK)
		die(&schedule_command, &e);
	/* ls reads only: its reader gone (mq schedule ls | head -1), it
	 * ends as the read-only commands do, by SIGPIPE, silently (mq(1)
	 * OUTPUT; mq schedule as a whole also writes, so main() does not) */
	return flush_read_only() == 0 ? 0 : EX_IOERR;
}

static void
check_name(const char *name)
{
	if (!mq_valid_queue(name))
		usage_error(&schedule_command, "invalid schedule name '%s': use "
		    "1 to %d of A-Z a-z 0-9 _ . -", shown(name),
		    MQ_SCHEDULE_NAME_MAX);
}

static int
do_run(struct mq_global *g, const char *name)
{
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;
	uint64_t id;

	check_name(name);
	/* its run's id is what it hands over, as mq push's */
	need_stdio(&schedule_command, STDOUT_CLOSED);
	c = open_queue_table(&schedule_command, g);
	st = mq_schedule_run(c, name, &id);
	e = *mq_conn_error(c);
	mq_close(c);
	if (st == MQ_EINVAL) {	/* its row is unusable: the table's data */
		report(&schedule_command, NULL, &e);
		exit(EX_DATAERR);
	}
	if (st != MQ_OK)
		die(&schedule_command, &e);
	printf("%llu\n", (unsigned long long)id);
	return flush_stdout() == 0 ? 0 : EX_IOERR;
}

static int
do_rm(struct mq_global *g, const char *name)
{
	struct mq_conn *c;
	struct mq_error e;
	enum mq_status st;

	check_name(name);
	c = open_queue_table(&schedule_command, g);
	st = mq_schedule_rm(c, name);
	e = *mq_conn_error(c);
	mq_close(c);
	if (st != MQ_OK)
		die(&schedule_command, &e);
	/* as apply --prune says it (mq(1) OUTPUT: a change is confirmed) */
	printf("removed %s\n", name);
	return flush_stdout() == 0 ? 0 : EX_IOERR;
}

static int
do_fire(struct mq_global *g, const struct sched_args *a)
{
	struct mq_fire_report r;
	struct mq_conn *c = open_queue_table(&schedule_command, g);
	struct mq_error e;
	enum mq_status st;
	int rc;
	char utc[INSTANT_MAX], local[INSTANT_MAX];

	st = mq_schedule_fire(c, a->queue ? g->queue : NULL, 0, &r);
	e = *mq_conn_error(c);
	mq_close(c);
	printf("fired %llu schedule%s: %llu run%s pushed, %llu missed "
	    "instant%s skipped", (unsigned long long)r.schedules,
	    PLURAL(r.schedules), (unsigned long long)r.runs, PLURAL(r.runs),
	    (unsigned long long)r.skipped, PLURAL(r.skipped));
	if (r.broken)
		printf(", %llu unusable (never fire)",
		    (unsigned long long)r.broken);
	/* a schedule still due after the firing is one another process
	 * holds (SKIP LOCKED passed it over, its move not committed yet):
	 * its instant is past, and not what comes next */
	if (st == MQ_OK && r.next_us && r.next_us <= r.now_us)
		printf("; next now (a due schedule another process is "
		    "firing)");
	else if (st == MQ_OK && r.next_us) {
		fmt_instant(r.next_us / 1000000 + (r.next_us % 1000000 > 0),
		    NULL, utc, local);
		printf("; next %s", utc);
	}
	putchar('\n');
	rc = flush_stdout();
	if (st != MQ_OK)
		die(&schedule_command, &e);
	return rc == 0 ? 0 : EX_IOERR;
}

int
cmd_schedule(int argc, char **argv, struct mq_global *g)
{
	struct sched_args a;
	const char *sub;
	int n, form;

	memset(&a, 0, sizeof a);
	n = parse_options(&schedule_command, argc, argv, g, option, &a);
	settle(&schedule_command, g, a.queue);
	if (n < 1)
		usage_error(&schedule_command, "a subcommand expected: apply, "
		    "ls, run, rm or fire");
	sub = argv[1];
	form = strcmp(sub, "apply") == 0 ? 0 : 1;
	if (strcmp(sub, "apply") != 0 && strcmp(sub, "ls") != 0 &&
	    strcmp(sub, "run") != 0 && strcmp(sub, "rm") != 0 &&
	    strcmp(sub, "fire") != 0)
		usage_error(&schedule_command, "unknown subcommand '%s': apply, "
		    "ls, run, rm or fire", shown(sub));
	if ((a.prune || a.dry_run) && form != 0)
		usage_error(&schedule_command, "--prune and --dry-run are for "
		    "apply");
	if ((a.json || a.count_given) && strcmp(sub, "ls") != 0)
		usage_error(&schedule_command, "--json and --next are for ls");
	if (a.queue && strcmp(sub, "fire") != 0)
		usage_error(&schedule_command, "--queue is for fire");
	if (strcmp(sub, "apply") == 0 || strcmp(sub, "run") == 0 ||
	    strcmp(sub, "rm") == 0) {
		if (n != 2)
			usage_error(&schedule_command, "%s takes one %s", sub,
			    form == 0 ? "FILE" : "NAME");
	} else if (n != 1) {
		usage_error(&schedule_command, "%s takes no operand", sub);
	}
	if (strcmp(sub, "apply") == 0)
		return do_apply(g, &a, argv[2]);
	if (strcmp(sub, "ls") == 0)
		return do_ls(g, &a);
	if (strcmp(sub, "run") == 0)
		return do_run(g, argv[2]);
	if (strcmp(sub, "rm") == 0)
		return do_rm(g, argv[2]);
	return do_fire(g, &a);
}
