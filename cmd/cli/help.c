/*
 * cli/help.c: part of every command's -h (documented in mq(1)), not
 * a command: the -h text of a command, from its option table: the
 * usage line (equal to the man page's SYNOPSIS, t070) and the option list.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "output/output.h"

/* The help column: an option wider than this gets its help below it. */
#define HELP_COL 20

static void
put_row_usage(FILE *f, const struct opt *o)
{
	if (o->flags & OPT_HIDDEN)
		return;
	if (o->usage) {
		if (*o->usage)
			fprintf(f, " %s", o->usage);
	} else {
		fprintf(f, " [--%s%s%s]", o->name, o->arg ? " " : "",
		    o->arg ? o->arg : "");
	}
}

void
put_usage(FILE *f, const struct command *cmd)
{
	const struct opt *tables[2], *o;
	int k, forms = 1, t;
	int nt = option_tables(cmd, tables);

	while (forms < FORMS_MAX && cmd->operands[forms])
		forms++;
	for (k = 0; k < forms; k++) {
		fputs(k ? "       mq" : "usage: mq", f);
		if (!(cmd->flags & CMD_MAIN))
			fprintf(f, " %s", cmd->name);
		for (t = 0; t < nt; t++)
			for (o = tables[t]; o->name; o++)
				if (o->forms == 0 || (o->forms & FORM(k)))
					put_row_usage(f, o);
		if (cmd->operands[k] && *cmd->operands[k])
			fprintf(f, " %s", cmd->operands[k]);
		fputc('\n', f);
	}
}

static void
put_row_help(FILE *f, const struct opt *o)
{
	const char *h = o->help, *nl;
	int w;

	if (o->flags & OPT_HIDDEN)
		return;
	if (o->short_name)
		w = fprintf(f, "  -%c, --%s%s%s", o->short_name, o->name,
		    o->arg ? " " : "", o->arg ? o->arg : "");
	else
		w = fprintf(f, "  --%s%s%s", o->name, o->arg ? " " : "",
		    o->arg ? o->arg : "");
	if (w - 2 > HELP_COL - 2)	/* two spaces at least before the help */
		fprintf(f, "\n%*s", HELP_COL + 2, "");
	else
		fprintf(f, "%*s", HELP_COL + 2 - w, "");
	/* the lines after the first, indented to the help column */
	while ((nl = strchr(h, '\n')) != NULL) {
		fprintf(f, "%.*s\n%*s", (int)(nl - h), h, HELP_COL + 2, "");
		h = nl + 1;
	}
	fprintf(f, "%s\n", h);
}

void
put_option_help(FILE *f, const struct command *cmd)
{
	const struct opt *o, *tables[2];
	int t, nt = option_tables(cmd, tables);

	fputs("\noptions:\n", f);
	for (t = 0; t < nt; t++)
		for (o = tables[t]; o->name; o++)
			put_row_help(f, o);
}

void
exit_written(const struct command *cmd)
{
	/* -h or -V into a full disk is no success (74, as every command's
	 * output); a reader gone ends mq by SIGPIPE first, as coreutils,
	 * or, SIGPIPE ignored, quietly with status 0 (mq(1) OUTPUT) */
	if (flush_stdout() != 0) {
		if (reader_gone(errno))
			exit(0);
		exit(stdout_failure(cmd));
	}
	exit(0);
}

void
help_exit(const struct command *cmd)
{
	put_usage(stdout, cmd);
	put_option_help(stdout, cmd);
	exit_written(cmd);
}
