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

#include "commands.h"
#include "output/output.h"

#ifndef MQ_VERSION
#define MQ_VERSION "unknown"
#endif

static int cmd_help(int argc, char **argv, struct mq_global *g);

/* mq help [COMMAND]: parsed as every command is (--, an unknown option's
 * line), but it takes no connection option: it never connects. Its -h is
 * mq's own help. */
static const struct opt help_opts[] = {
	{ 'h', "help", 'h', NULL, "show mq's help", COMPLETE_NONE, NULL, "",
	    0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

static const struct command help_command = {
	"help", HELP_SUMMARY, help_opts, { "[COMMAND]", NULL },
	CMD_OWN_HELP | CMD_NO_SHARED, cmd_help, NULL
};

/* help last, as mq -h lists it */
static const struct command *const table[] = {
	&ack_command, &archive_command, &cancel_command, &check_command,
	&completion_command, &extend_command, &fail_command, &init_command,
	&limit_command, &ls_command, &pause_command, &pop_command, &purge_command,
	&push_command, &requeue_stale_command, &resume_command, &retry_command,
	&schedule_command, &show_command, &stats_command, &top_command, &wait_command,
	&why_command, &work_command, &help_command, NULL
};

static const struct opt main_opts[] = {
	{ 'V', "version", 'V', NULL, "print the version", COMPLETE_NONE, NULL,
	    "[-h | -V]", 0, 0 },
	{ 0, NULL, 0, NULL, NULL, COMPLETE_NONE, NULL, NULL, 0, 0 }
};

static const struct command main_command = {
	"mq", NULL, main_opts, { "COMMAND [ARG...]", NULL },
	CMD_POSIX | CMD_OWN_HELP | CMD_MAIN, NULL, NULL
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

static void
help_option(void *ctx, int id, const char *arg)
{
	if (id == 'h')
		help();
}

/* mq help COMMAND is mq COMMAND -h; mq help alone, mq -h */
static int
cmd_help(int argc, char **argv, struct mq_global *g)
{
	const struct command *cmd;
	char *av[3];
	int n;

	n = parse_options(&help_command, argc, argv, g, help_option, NULL);
	if (n > 1)
		usage_error(&help_command, "unexpected argument '%s'",
		    shown(argv[2]));
	if (n == 0)
		help();
	if ((cmd = find_command_spec(argv[1])) == NULL)
		usage_error(&help_command, "'%s' is not a command (see 'mq -h')",
		    shown(argv[1]));
	av[0] = argv[1];
	av[1] = "-h";
	av[2] = NULL;
	return cmd->fn(2, av, g);
}

int
main(int argc, char **argv)
{
	struct mq_global g;
	const struct command *cmd;
	sigset_t held;
	int rc;

	process_start();
	register_commands(&main_command, table);
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
	if ((cmd = find_command_spec(argv[0])) == NULL)
		usage_error(&main_command, "'%s' is not a command (see 'mq -h')",
		    shown(argv[0]));
	if (cmd->flags & CMD_HOLDS_STOPS) {
		catch_stop(&held);
		sigprocmask(SIG_BLOCK, &held, NULL);
	}
	rc = cmd->fn(argc, argv, &g);
	if (flush_stdout() != 0) {
		if ((cmd->flags & CMD_READS_ONLY) && reader_gone(errno))
			end_by_sigpipe();
		return stdout_failure(cmd);	/* said once */
	}
	if ((cmd->flags & CMD_HOLDS_STOPS) && stop_signal_pending(&held))
		return 128 + stop_signal;
	return rc;
}
