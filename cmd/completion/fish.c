/*
 * completion_fish.c: the fish completion script, written from the option
 * tables: one "complete" line per option and command.
 */
#include "completion.h"

static const char fish_body[] =
    "\n"
    "# the mq command on the line, if one is there yet\n"
    "function __mq_command\n"
    "\tset -l words (commandline -opc)\n"
    "\tset -e words[1]\n"
    "\tset -l skip 0\n"
    "\tfor w in $words\n"
    "\t\tif test $skip = 1\n"
    "\t\t\tset skip 0\n"
    "\t\telse if contains -- $w $__mq_global_value_opts\n"
    "\t\t\tset skip 1\n"
    "\t\telse if string match -q -- '-*' $w\n"
    "\t\t\tcontinue\n"
    "\t\telse\n"
    "\t\t\techo $w\n"
    "\t\t\treturn 0\n"
    "\t\tend\n"
    "\tend\n"
    "\treturn 1\n"
    "end\n"
    "\n"
    "function __mq_using\n"
    "\tset -l c (__mq_command)\n"
    "\tand test \"$c\" = $argv[1]\n"
    "end\n"
    "\n"
    "# the queue names of the table, through mq itself, with the connection\n"
    "# options typed so far (nothing when no server answers); with \"list\",\n"
    "# completes the last name of a comma-separated list\n"
    "function __mq_queues\n"
    "\tset -l words (commandline -opc)\n"
    "\tset -l args\n"
    "\tset -l i 2\n"
    "\twhile test $i -le (count $words)\n"
    "\t\tset -l w $words[$i]\n"
    "\t\tif contains -- $w $__mq_global_value_opts\n"
    "\t\t\tset i (math $i + 1)\n"
    "\t\t\ttest $i -le (count $words); and set -a args $w $words[$i]\n"
    "\t\telse if contains -- (string split -m 1 = -- $w)[1] $__mq_conn_opts\n"
    "\t\t\tset -a args $w\n"
    "\t\tend\n"
    "\t\tset i (math $i + 1)\n"
    "\tend\n"
    "\tset -l pre ''\n"
    "\tif test \"$argv[1]\" = list\n"
    "\t\tset -l tok (commandline -ct)\n"
    "\t\tstring match -q -- '*,*' $tok\n"
    "\t\tand set pre (string replace -r '[^,]*$' '' -- $tok)\n"
    "\tend\n"
    "\tfor q in ($words[1] completion --queues $args 2>/dev/null)\n"
    "\t\techo $pre$q\n"
    "\tend\n"
    "end\n"
    "\n"
    "complete -c mq -f\n";

/* What completes a value: complete(1)'s flags for it. */
static void
put_fish_value(FILE *f, enum complete k, const char *words)
{
	switch (k) {
	case COMPLETE_FILE:	fputs(" -r -F", f); break;
	case COMPLETE_DIR:
		fputs(" -x -a '(__fish_complete_directories)'", f);
		break;
	case COMPLETE_QUEUE:	fputs(" -x -a '(__mq_queues)'", f); break;
	case COMPLETE_QUEUES:	fputs(" -x -a '(__mq_queues list)'", f); break;
	case COMPLETE_WORDS:	fprintf(f, " -x -a '%s'", words); break;
	case COMPLETE_PROGRAM:
		fputs(" -x -a '(__fish_complete_command)'", f);
		break;
	default:		fputs(" -x", f); break;
	}
}

static void
put_rows(FILE *f, const char *cond, const struct opt *o)
{
	for (; o->name; o++) {
		if (o->flags & OPT_HIDDEN)
			continue;
		fputs("complete -c mq", f);
		if (cond)
			fprintf(f, " -n '%s'", cond);
		if (o->short_name)
			fprintf(f, " -s %c", o->short_name);
		fprintf(f, " -l %s", o->name);
		if (o->arg)
			put_fish_value(f, o->complete, o->words);
		fputs(" -d ", f);
		put_quoted(f, o->help);
		fputc('\n', f);
	}
}

void
put_fish_completion(FILE *f)
{
	const struct command *c;
	char cond[64];
	size_t i;

	fputs("# fish completion for mq(1), written by 'mq completion fish' "
	    "from mq's\n# option tables.\n\nset -g __mq_global_value_opts",
	    f);
	for (i = 0; shared_opts[i].name; i++)
		if (shared_opts[i].arg)
			fprintf(f, " --%s", shared_opts[i].name);
	fputs("\nset -g __mq_conn_opts", f);
	for (i = 0; shared_opts[i].name; i++)
		if (shared_opts[i].id != 'h')
			fprintf(f, " --%s", shared_opts[i].name);
	fputc('\n', f);
	fputs(fish_body, f);
	for (i = 0; (c = commands[i]) != NULL; i++) {
		fprintf(f, "complete -c mq -n 'not __mq_command' -a %s -d ",
		    c->name);
		put_quoted(f, c->summary);
		fputc('\n', f);
	}
	fputs("complete -c mq -n 'not __mq_command' -a help -d 'the help of "
	    "a command'\n", f);
	put_rows(f, "not __mq_command", mq_main->opts);
	put_rows(f, NULL, shared_opts);
	for (i = 0; (c = commands[i]) != NULL; i++) {
		snprintf(cond, sizeof cond, "__mq_using %s", c->name);
		put_rows(f, cond, c->opts);
		if (c->operand_complete == COMPLETE_NONE)
			continue;
		fprintf(f, "complete -c mq -n '%s'", cond);
		put_fish_value(f, c->operand_complete, c->operand_words);
		fputc('\n', f);
	}
	fputs("complete -c mq -n '__mq_using help' -x -a '", f);
	for (i = 0; (c = commands[i]) != NULL; i++)
		fprintf(f, "%s%s", i ? " " : "", c->name);
	fputs("'\n", f);
}
