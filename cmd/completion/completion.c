/*
 * completion.c: mq completion: shell completion scripts generated from
 * the option tables, and the two hidden helpers the scripts and t070 call:
 * the options of a command, and the queue (or calendar schedule) names
 * of a table.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "completion.h"
#include "schedule.h"

/* A server that does not answer soon is not waited for: a completion
 * must come back at once, with or without names. The bound of the whole
 * of --queues: option files, connection, answers (mq-completion(1)). */
#define QUEUES_TIMEOUT_S 2

enum { OPT_OPTIONS = OPT_CMD, OPT_QUEUES, OPT_SCHEDULES };

static const struct opt opts[] = {
	{ OPT_OPTIONS, "options", 0, NULL, "the options of a command",
	    COMPLETE_NONE, NULL, "", 0, OPT_HIDDEN },
	{ OPT_QUEUES, "queues", 0, NULL, "the queue names of the table",
	    COMPLETE_NONE, NULL, "", 0, OPT_HIDDEN },
	{ OPT_SCHEDULES, "schedules", 0, NULL, "the schedule names of the "
	    "table", COMPLETE_NONE, NULL, "", 0, OPT_HIDDEN },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

const struct command completion_command = {
	"completion", "print a shell completion script", opts,
	{ "bash|zsh|fish", NULL }, 0,
	cmd_completion, NULL
};

static void
option(void *ctx, int id, const char *arg)
{
	*(int *)ctx = id;
}

static void
put_names(const struct opt *o)
{
	for (; o->name; o++) {
		if (o->flags & OPT_HIDDEN)
			continue;
		if (o->short_name)
			printf("-%c\n", o->short_name);
		printf("--%s\n", o->name);
	}
}

/* The options of cmd (mq's own without one), one a line: what -h lists
 * and the man pages document (t070). */
static int
list_options(int n, char **argv)
{
	const struct command *cmd = mq_main;

	if (n > 1 || (n == 1 && (cmd = find_command_spec(argv[1])) == NULL))
		usage_error(&completion_command, "--options takes one command name");
	put_names(cmd->opts);
	put_names(shared_opts);
	return 0;
}

/* --queues out of time: nothing was printed (the names are printed only
 * once all are read, the alarm stopped first), nothing will be. */
static void
out_of_time(int sig)
{
	(void)sig;
	_exit(0);
}

/* Set while the typed words are parsed: a usage error or -h among them
 * ends mq there, and then quietly, with status 0 (quiet_end, at exit). */
static volatile sig_atomic_t parsing;

static void
quiet_end(void)
{
	if (parsing)
		_exit(0);
}

/* The words of the line being completed, after "mq" and before the word
 * being completed (words[0..n)), read as mq reads its command line: mq's
 * own options, the command name, then the command's options, by the same
 * parser, so that abbreviations (--def), --opt=value and --opt value,
 * "--" and the precedence of the line's settings are exactly mq's. The
 * last word may be the option whose value is being completed (--queue):
 * a placeholder, a valid queue name, is given as its value (or is one
 * more operand). A line mq would refuse (an unknown or ambiguous option,
 * a bad value, an unknown command, -h) is no line to read settings from:
 * 0 if the line was read, -1 if not, and then nothing was printed. */
static int
read_line(struct mq_global *g, int n, char **words)
{
	const struct command *cmd;
	char **av, *placeholder = "default";
	int m, out, err, null;

	if ((av = calloc((size_t)n + 3, sizeof *av)) == NULL)
		return -1;
	av[0] = "mq";
	memcpy(av + 1, words, (size_t)n * sizeof *av);
	av[n + 1] = placeholder;
	fflush(stdout);
	out = dup(1);
	err = dup(2);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (out < 0 || err < 0 || null < 0)
		_exit(0);
	dup2(null, 1);
	dup2(null, 2);
	close(null);
	atexit(quiet_end);
	parsing = 1;
	m = parse_options(mq_main, n + 2, av, g, NULL, NULL);
	cmd = m > 0 ? find_command_spec(av[1]) : NULL;
	if (cmd != NULL)
		parse_options(cmd, m, av + 1, g, NULL, NULL);
	parsing = 0;
	fflush(stdout);
	dup2(out, 1);
	dup2(err, 2);
	close(out);
	close(err);
	/* a command name mq does not know; the placeholder alone is none */
	m = cmd != NULL || m == 0 || (m == 1 && av[1] == placeholder) ? 0 : -1;
	free(av);		/* g points into words, not into av */
	return m;
}

/* The queue names of the table (schedules: its calendar schedules'
 * names), one a line; nothing, and status 0, when
 * the server cannot tell within QUEUES_TIMEOUT_S, whatever held it up (a
 * piped or included option file nobody writes, a host name that does not
 * resolve, a server that does not answer). The settings are read as
 * every command reads them (settle: MQ_PORT, MQ_TABLE, a piped option
 * file), the line's options over the environment over the option files.
 * Only names mq accepts are printed. */
static int
list_queues(struct mq_global *g, int nwords, char **words, int schedules)
{
	struct mq_schedule_name *sn = NULL;
	struct mq_queue_stats *q = NULL;
	struct mq_error e;
	struct mq_conn *c;
	struct sigaction sa;
	size_t n, i;
	char why[512];

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = out_of_time;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarm(QUEUES_TIMEOUT_S);
	if (nwords > 0 && read_line(g, nwords, words) != 0)
		return 0;
	if (settle_checked(&completion_command, g, 0, QUEUES_TIMEOUT_S * 1000, why,
	    sizeof why) != 0)
		return 0;
	g->conn.connect_timeout_s = QUEUES_TIMEOUT_S;
	g->conn.read_timeout_s = QUEUES_TIMEOUT_S;
	if ((c = mq_connect(&g->conn, &e)) == NULL)
		return 0;
	if (mq_use_table(c, g->table) != MQ_OK || (schedules ?
	    mq_schedule_names(c, &sn, &n) : mq_queue_names(c, &q, &n)) !=
	    MQ_OK) {
		mq_close(c);
		return 0;
	}
	mq_close(c);
	alarm(0);
	for (i = 0; i < n; i++)
		if (schedules ? sn[i].len == strlen(sn[i].name) &&
		    mq_valid_queue(sn[i].name) : q[i].queue_len ==
		    strlen(q[i].queue) && mq_valid_queue(q[i].queue))
			printf("%s\n", schedules ? sn[i].name : q[i].queue);
	free(q);
	free(sn);
	return 0;
}

int
cmd_completion(int argc, char **argv, struct mq_global *g)
{
	int mode = 0, n;

	n = parse_options(&completion_command, argc, argv, g, option, &mode);
	if (mode == OPT_OPTIONS)
		return list_options(n, argv);
	if (mode == OPT_QUEUES || mode == OPT_SCHEDULES)
		return list_queues(g, n, argv + 1, mode == OPT_SCHEDULES);
	/* the script needs no connection: a bad MQ_TABLE or MQ_PORT is
	 * not its business */
	if (n != 1)
		usage_error(&completion_command, "one shell expected: bash, zsh or "
		    "fish");
	if (strcmp(argv[1], "bash") == 0)
		put_bash_completion(stdout);
	else if (strcmp(argv[1], "zsh") == 0)
		put_zsh_completion(stdout);
	else if (strcmp(argv[1], "fish") == 0)
		put_fish_completion(stdout);
	else
		usage_error(&completion_command, "no completion for '%s': bash, zsh "
		    "or fish", shown(argv[1]));
	return 0;
}
