/*
 * completion/fish.c: the fish completion script, written from the option
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
    "\t\telse if string match -qr -- '^--[^=]+$' $w\n"
    "\t\t\t# an option of mq's, or the one it abbreviates\n"
    "\t\t\tset -l o (string match -- \"$w*\" $__mq_global_opts)\n"
    "\t\t\tcontains -- $w $__mq_global_opts; and set o $w\n"
    "\t\t\ttest (count $o) = 1; and contains -- $o $__mq_global_value_opts\n"
    "\t\t\tand set skip 1\n"
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
    "\n";

/* __mq_words: the words as fish would pass them, with nothing run;
 * __mq_queues */
static const char fish_queues[] =
    "# the words typed before the current one, mq first, as fish would pass\n"
    "# them, one a line, without running anything: quotes ('...', \"...\") and\n"
    "# backslashes removed, a leading ~ or ~NAME, $NAME and {$NAME} expanded\n"
    "# (a list variable as fish expands it); (...), $(...), other braces and\n"
    "# globs stay as typed: what they would make is not known without running\n"
    "# them\n"
    "function __mq_words\n"
    "\tset -l chars (string join \\n -- (commandline -pc) | string split '')\n"
    "\tset -l n (count $chars)\n"
    "\tset -l out\n"
    "\tset -l acc ''\n"
    "\tset -l inword 0\n"
    "\tset -l q ''\n"
    "\tset -l i 1\n"
    "\tset -l depth 0\n"
    "\twhile test $i -le $n\n"
    "\t\tset -l c $chars[$i]\n"
    "\t\tset i (math $i + 1)\n"
    "\t\tset -l d ''\n"
    "\t\ttest $i -le $n; and set d $chars[$i]\n"
    "\t\tif test \"$q\" = \"'\"\n"
    "\t\t\tif test \"$c\" = \"'\"\n"
    "\t\t\t\tset q ''\n"
    "\t\t\telse if test \"$c\" = '\\\\'; and contains -- \"$d\" \"'\" '\\\\'\n"
    "\t\t\t\tset acc $acc$d\n"
    "\t\t\t\tset i (math $i + 1)\n"
    "\t\t\telse\n"
    "\t\t\t\tset acc $acc$c\n"
    "\t\t\tend\n"
    "\t\t\tcontinue\n"
    "\t\tend\n"
    "\t\t# (...): a command substitution, not run, one piece of the word\n"
    "\t\tif test -z \"$q\"; and test $depth -gt 0 -o \"$c\" = '('\n"
    "\t\t\ttest \"$c\" = '('; and set depth (math $depth + 1)\n"
    "\t\t\ttest \"$c\" = ')'; and set depth (math $depth - 1)\n"
    "\t\t\tset acc $acc$c\n"
    "\t\t\tset inword 1\n"
    "\t\t\tcontinue\n"
    "\t\tend\n"
    "\t\tif test -z \"$q\"; and contains -- \"$c\" ' ' \\t \\n ';' '|' '&'\n"
    "\t\t\ttest $inword = 1; and set -a out $acc\n"
    "\t\t\tset acc ''\n"
    "\t\t\tset inword 0\n"
    "\t\t\tcontinue\n"
    "\t\tend\n"
    "\t\tif test $inword = 0; and test \"$c\" = '~'\n"
    "\t\t\tset -l name ''\n"
    "\t\t\twhile test $i -le $n; and string match -qr '^[A-Za-z0-9._-]$' -- \"$chars[$i]\"\n"
    "\t\t\t\tset name $name$chars[$i]\n"
    "\t\t\t\tset i (math $i + 1)\n"
    "\t\t\tend\n"
    "\t\t\tset -l home ''\n"
    "\t\t\tif test -z \"$name\"\n"
    "\t\t\t\tset home ~\n"
    "\t\t\telse if string match -qr '^[A-Za-z0-9_][A-Za-z0-9._-]*$' -- $name\n"
    "\t\t\t\t# a user name, checked: no other text reaches eval\n"
    "\t\t\t\teval \"set home ~$name\" 2>/dev/null\n"
    "\t\t\t\tstring match -q -- '~*' \"$home\"; and set home ''\n"
    "\t\t\tend\n"
    "\t\t\tif test -n \"$home\"\n"
    "\t\t\t\tset acc $home\n"
    "\t\t\telse\n"
    "\t\t\t\tset acc \"~$name\"\n"
    "\t\t\tend\n"
    "\t\t\tset inword 1\n"
    "\t\t\tcontinue\n"
    "\t\tend\n"
    "\t\tset inword 1\n"
    "\t\tswitch $c\n"
    "\t\t\tcase '\\\\'\n"
    "\t\t\t\tset i (math $i + 1)\n"
    "\t\t\t\tif test \"$q\" = '\"'\n"
    "\t\t\t\t\tif contains -- \"$d\" '\"' '$' '\\\\'\n"
    "\t\t\t\t\t\tset acc $acc$d\n"
    "\t\t\t\t\telse if test \"$d\" != \\n\n"
    "\t\t\t\t\t\tset acc $acc'\\\\'$d\n"
    "\t\t\t\t\tend\n"
    "\t\t\t\telse if test -n \"$d\"\n"
    "\t\t\t\t\tset acc $acc(string unescape -- \"\\\\$d\")\n"
    "\t\t\t\tend\n"
    "\t\t\tcase \"'\"\n"
    "\t\t\t\tset q \"'\"\n"
    "\t\t\tcase '\"'\n"
    "\t\t\t\tif test \"$q\" = '\"'\n"
    "\t\t\t\t\tset q ''\n"
    "\t\t\t\telse\n"
    "\t\t\t\t\tset q '\"'\n"
    "\t\t\t\tend\n"
    "\t\t\tcase '{' '$'\n"
    "\t\t\t\t# {$NAME}, fish's ${NAME}\n"
    "\t\t\t\tset -l brace 0\n"
    "\t\t\t\tif test \"$c\" = '{'\n"
    "\t\t\t\t\tif test -z \"$q\"; and test \"$d\" = '$'; and string match -qr '^\\$[A-Za-z0-9_]+\\}' -- (string join '' -- $chars[$i..-1])\n"
    "\t\t\t\t\t\tset brace 1\n"
    "\t\t\t\t\t\tset i (math $i + 1)\n"
    "\t\t\t\t\telse\n"
    "\t\t\t\t\t\tset acc $acc$c\n"
    "\t\t\t\t\t\tcontinue\n"
    "\t\t\t\t\tend\n"
    "\t\t\t\tend\n"
    "\t\t\t\tset -l name ''\n"
    "\t\t\t\twhile test $i -le $n; and string match -qr '^[A-Za-z0-9_]$' -- \"$chars[$i]\"\n"
    "\t\t\t\t\tset name $name$chars[$i]\n"
    "\t\t\t\t\tset i (math $i + 1)\n"
    "\t\t\t\tend\n"
    "\t\t\t\tif test -z \"$name\"\n"
    "\t\t\t\t\tset acc $acc'$'\n"
    "\t\t\t\telse if test \"$q\" = '\"'\n"
    "\t\t\t\t\tset acc $acc\"$$name\"\n"
    "\t\t\t\telse\n"
    "\t\t\t\t\tset acc $acc$$name\n"
    "\t\t\t\tend\n"
    "\t\t\t\ttest $brace = 1; and set i (math $i + 1)\n"
    "\t\t\tcase '*'\n"
    "\t\t\t\tset acc $acc$c\n"
    "\t\tend\n"
    "\tend\n"
    "\t# the current word, begun or not, is not one of them\n"
    "\tstring join \\n -- $out\n"
    "end\n"
    "\n"
    "# the queue names of the table, through mq itself, given the words typed\n"
    "# before the current one as fish would pass them (__mq_words): mq reads\n"
    "# its settings from them as it would read its command line (nothing when\n"
    "# no server answers); with \"list\", completes the last name of a\n"
    "# comma-separated list; with \"schedules\", the calendar schedules' names\n"
    "function __mq_queues\n"
    "\tset -l what --queues\n"
    "\ttest \"$argv[1]\" = schedules\n"
    "\tand set what --schedules\n"
    "\tset -l args (__mq_words)\n"
    "\tset -l mq $args[1]\n"
    "\tset -e args[1]\n"
    "\tset -l q ($mq completion $what -- $args 2>/dev/null)\n"
    "\tif test \"$argv[1]\" = list\n"
    "\t\t__mq_list $q\n"
    "\telse\n"
    "\t\tstring join \\n -- $q\n"
    "\tend\n"
    "end\n"
    "\n"
    "complete -c mq -f\n";

/* __mq_list and __mq_programs: list items not given yet, programs */
static const char fish_values[] =
    "# the last item of the comma-separated list being typed: the words\n"
    "# given that are not in the list yet (a list names each once)\n"
    "function __mq_list\n"
    "\tset -l tok (commandline -ct)\n"
    "\tset -l pre ''\n"
    "\tset -l used\n"
    "\tif string match -q -- '*,*' $tok\n"
    "\t\tset pre (string replace -r '[^,]*$' '' -- $tok)\n"
    "\t\tset used (string split , -- $pre)\n"
    "\tend\n"
    "\tfor w in $argv\n"
    "\t\tcontains -- $w $used; or echo $pre$w\n"
    "\tend\n"
    "end\n"
    "\n"
    "# the programs the word being typed may name, as mq work runs them\n"
    "# (execvp): files with a / in it, else executables of PATH, not the\n"
    "# shell's functions or builtins (unless a file of PATH has the name too)\n"
    "function __mq_programs\n"
    "\tset -l tok (commandline -ct)\n"
    "\tif string match -q -- '*/*' $tok\n"
    "\t\t__fish_complete_command\n"
    "\t\treturn\n"
    "\tend\n"
    "\tfor d in $PATH\n"
    "\t\tfor f in $d/$tok*\n"
    "\t\t\ttest -f $f -a -x $f; and string replace -r '^.*/' '' -- $f\n"
    "\t\tend\n"
    "\tend | sort -u\n"
    "end\n"
    "\n";

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
	case COMPLETE_SCHEDULE:
		fputs(" -x -a '(__mq_queues schedules)'", f);
		break;
	case COMPLETE_WORDS:	fprintf(f, " -x -a '%s'", words); break;
	case COMPLETE_WORD_LIST:
		fprintf(f, " -x -a '(__mq_list %s)'", words);
		break;
	case COMPLETE_PROGRAM:
		fputs(" -x -a '(__mq_programs)'", f);
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
	fputs("\nset -g __mq_global_opts", f);
	for (i = 0; mq_main->opts[i].name; i++)
		fprintf(f, " --%s", mq_main->opts[i].name);
	for (i = 0; shared_opts[i].name; i++)
		fprintf(f, " --%s", shared_opts[i].name);
	fputc('\n', f);
	fputs(fish_body, f);
	fputs(fish_values, f);
	fputs(fish_queues, f);
	for (i = 0; (c = commands[i]) != NULL; i++) {
		fprintf(f, "complete -c mq -n 'not __mq_command' -a %s -d ",
		    c->name);
		put_quoted(f, c->summary);
		fputc('\n', f);
	}
	fputs("complete -c mq -n 'not __mq_command' -a help -d ", f);
	put_quoted(f, HELP_SUMMARY);
	fputc('\n', f);
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
