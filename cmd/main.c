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

static const struct command *const table[] = {
	&ack_command, &archive_command, &cancel_command, &check_command,
	&completion_command, &extend_command, &fail_command, &init_command,
	&ls_command, &pause_command, &pop_command, &purge_command,
	&push_command, &requeue_stale_command, &resume_command, &retry_command,
	&show_command, &stats_command, &top_command, &why_command,
	&work_command, NULL
};

static const struct opt main_opts[] = {
	{ 'V', "version", 'V', NULL, "print the version", COMPLETE_NONE, NULL,
	    "[-h | -V]", 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

static const struct command main_command = {
	"mq", NULL, main_opts, { "COMMAND [ARG...]", NULL }, COMPLETE_COMMAND,
	NULL, CMD_POSIX | CMD_OWN_HELP | CMD_MAIN, NULL, NULL
};

static void
help(void)
{
	size_t i;

	put_usage(stdout, &main_command);
	printf("\ncommands:\n");
	for (i = 0; table[i]; i++)
		printf("  %-14s %s\n", table[i]->name, table[i]->summary);
	put_option_help(stdout, &main_command);
	printf("\n'mq COMMAND -h' and mq-COMMAND(1) tell more.\n");
	exit_written(&main_command);
}

static void
main_option(void *ctx, int id, const char *arg)
{
	if (id == 'h')
		help();
	if (id == 'V') {
		printf("mq %s\n", MQ_VERSION);
		exit_written(&main_command);
	}
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

/* Whether stdout is a pipe (or socket) nobody reads any more: the write
 * failed with EPIPE, or, the error having been met by an earlier write,
 * poll says so now. */
int
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

/* A signal mask is inherited through exec: a parent that blocked
 * signals (for its own signalfd, say) and forgot them would leave mq
 * work deaf to SIGTERM, SIGINT and SIGHUP, and to its jobs' ends
 * (SIGCHLD), and mq top to its terminal's. What a command blocks, it
 * blocks itself, for as long as it needs to. (Ignored signals stay
 * ignored: a background job of a shell ignores SIGINT by design.) */
const int stop_signals[NSTOP_SIGNALS] = { SIGTERM, SIGINT, SIGHUP };

/* The stop signals mq was started with ignored: nohup's SIGHUP, a
 * shell's background job's SIGINT. They stay ignored (catch_signal). */
static sigset_t started_ignored;

int
ignored_at_start(int sig)
{
	return sigismember(&started_ignored, sig) == 1;
}

void
catch_signal(int sig, const struct sigaction *sa)
{
	if (!ignored_at_start(sig))
		sigaction(sig, sa, NULL);
}

static void
note_ignored_signals(void)
{
	struct sigaction sa;
	size_t i;

	sigemptyset(&started_ignored);
	for (i = 0; i < NSTOP_SIGNALS; i++)
		if (sigaction(stop_signals[i], NULL, &sa) == 0 &&
		    sa.sa_handler == SIG_IGN)
			sigaddset(&started_ignored, stop_signals[i]);
}

static void
unblock_signals(void)
{
	static const int used[] = { SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGPIPE,
	    SIGWINCH, SIGTSTP, SIGCONT };
	sigset_t s;
	size_t i;

	sigemptyset(&s);
	for (i = 0; i < sizeof used / sizeof used[0]; i++)
		sigaddset(&s, used[i]);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
}

int
main(int argc, char **argv)
{
	struct mq_global g;
	const struct command *cmd;
	int rc;

	sanitise_stdfd();
	register_commands(&main_command, table);
	note_ignored_signals();
	unblock_signals();
	memset(&g, 0, sizeof g);
	global_from_env(&g);
	/* the command name ends mq's own options */
	argc = parse_options(&main_command, argc, argv, &g, main_option,
	    NULL);
	argv++;
	if (argc == 0) {
		put_usage(stderr, &main_command);
		return EX_USAGE;
	}
	if (strcmp(argv[0], "help") == 0) {
		if (argc > 2)
			usage_error(&main_command, "help takes one COMMAND at most");
		if (argc < 2 || strcmp(argv[1], "help") == 0 ||
		    strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
			help();
		argv[0] = argv[1];
		argv[1] = "-h";
		argc = 2;
	}
	if ((cmd = find_command_spec(argv[0])) == NULL)
		usage_error(&main_command, "'%s' is not a command (see 'mq -h')",
		    shown(argv[0]));
	rc = cmd->fn(argc, argv, &g);
	errno = 0;	/* the flush's own error, not one from before */
	if (fflush(stdout) == EOF || ferror(stdout)) {
		if ((cmd->flags & CMD_READS_ONLY) && reader_gone(errno))
			end_by_sigpipe();
		fprintf(stderr, "mq %s: write failure on standard output\n",
		    cmd->name);
		return EX_IOERR;
	}
	return rc;
}
