/*
 * main.c: the mq binary: global options, then the subcommand table.
 * Help and version never touch the database.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"

#ifndef MQ_VERSION
#define MQ_VERSION "unknown"
#endif

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv, struct mq_global *g);
	const char *summary;
} cmds[] = {
	{"ack", cmd_ack, "mark claimed jobs done"},
	{"archive", cmd_archive, "move finished jobs to the archive table"},
	{"cancel", cmd_cancel, "stop jobs that have not run (recurring too)"},
	{"extend", cmd_extend, "extend a claimed job's lease"},
	{"fail", cmd_fail, "give a claimed job back, to retry or bury"},
	{"init", cmd_init, "create or upgrade the job table"},
	{"pause", cmd_pause, "stop claims from a queue"},
	{"pop", cmd_pop, "claim jobs"},
	{"purge", cmd_purge, "delete a queue's waiting jobs"},
	{"push", cmd_push, "add jobs"},
	{"requeue-stale", cmd_requeue_stale, "put jobs of expired leases back"},
	{"resume", cmd_resume, "restart claims from a queue"},
	{"stats", cmd_stats, "queue health: counts, ages"},
	{"work", cmd_work, "run a command for each job: a consumer loop"},
};

static const char usage[] =
    "usage: mq [-h | -V] [--table T] [CONNECTION-OPTIONS] COMMAND [ARG...]";

static void
help(void)
{
	size_t i;

	printf("%s\n\ncommands:\n", usage);
	for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		printf("  %-14s %s\n", cmds[i].name, cmds[i].summary);
	printf("\noptions:\n  -V, --version       print the version\n%s"
	    "\n'mq COMMAND -h' and mq-COMMAND(1) tell more.\n",
	    connection_help);
	exit(0);
}

/* Started with 0, 1 or 2 closed (`mq work 2>&-`), the first socket or file
 * mq opens would take that number: a job's stderr written into the server
 * connection, ids sent to the server as if to stdout. Each closed one is
 * opened on /dev/null first (OpenSSH's sanitise_stdfd()); without
 * /dev/null mq refuses to run rather than risk it. Commands whose work
 * is to read stdin or to hand something over on stdout refuse to start
 * when it was closed (need_stdio()): a job popped into /dev/null, or
 * pushed with ids nobody sees, would be a silent loss. */
unsigned std_closed;

static void
sanitise_stdfd(void)
{
	int fd, nullfd;

	for (fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFL) != -1)
			continue;
		std_closed |= 1u << fd;
		nullfd = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
		if (nullfd != fd) {
			/* fd 2 may be the one closed: say it where we can */
			if (fcntl(2, F_GETFL) != -1)
				fprintf(stderr, "mq: cannot open /dev/null "
				    "for a closed standard descriptor\n");
			_exit(EX_OSERR);
		}
	}
}

/* Set by a command that changes nothing: see cmds.h. */
int reads_only;

/* Whether stdout is a pipe (or socket) nobody reads any more: the write
 * failed with EPIPE, or, the error having been met by an earlier write,
 * poll says so now. */
static int
reader_gone(int err)
{
	struct pollfd p = { 1, POLLOUT, 0 };

	return err == EPIPE || (poll(&p, 1, 0) == 1 &&
	    (p.revents & (POLLERR | POLLHUP)));
}

/* The reader of a read-only command's output has had what it wanted
 * (`mq stats | head -1`): end as coreutils do under the default SIGPIPE,
 * silently, killed by that signal (the shell says 141). The client
 * library ignores SIGPIPE for its sockets, so the write only failed: the
 * default disposition comes back here. */
static void
end_by_sigpipe(void)
{
	sigset_t s;

	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&s);
	sigaddset(&s, SIGPIPE);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	raise(SIGPIPE);
	_exit(128 + SIGPIPE);
}

static const struct cmd *
find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
	return NULL;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"version", no_argument, NULL, 'V'},
		CONNECTION_LONGOPTS,
		{NULL, 0, NULL, 0}
	};
	struct mq_global g;
	const struct cmd *cmd;
	int opt, rc;

	sanitise_stdfd();
	opterr = 0;	/* bad_option() says it in one line */
	memset(&g, 0, sizeof g);
	global_from_env(&g);
	while ((opt = getopt_long(argc, argv, "+:hV", longopts, NULL)) != -1) {
		if (common_option("mq", opt, optarg, &g))
			continue;
		switch (opt) {
		case 'h':
			help();
			break;
		case 'V':
			printf("mq %s\n", MQ_VERSION);
			return 0;
		default:
			bad_option("mq", opt, argv);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		fprintf(stderr, "%s\n", usage);
		return EX_USAGE;
	}
	if (strcmp(argv[0], "help") == 0) {
		if (argc < 2)
			help();
		argv[0] = argv[1];
		argv[1] = "-h";
		argc = 2;
	}
	if ((cmd = find(argv[0])) == NULL)
		usage_error("mq", "'%s' is not a command (see 'mq -h')",
		    shown(argv[0]));
	optind = 1;	/* each command parses its own argv from the start */
	rc = cmd->fn(argc, argv, &g);
	errno = 0;	/* the flush's own error, not one from before */
	if (fflush(stdout) == EOF || ferror(stdout)) {
		if (reads_only && reader_gone(errno))
			end_by_sigpipe();
		fprintf(stderr, "mq %s: write failure on standard output\n",
		    cmd->name);
		return EX_IOERR;
	}
	return rc;
}
