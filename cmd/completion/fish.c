/*
 * completion/fish.c: the fish completion script, written from the option
 * tables: one "complete" line per option and command.
 */
#include "completion.h"

static const char fish_body[] =
    "\n"
    "# __mq_long CMD WORD: WORD, or the one option of CMD it abbreviates (as\n"
    "# mq reads --def for --defaults-file)\n"
    "function __mq_long\n"
    "\tset -l w $argv[2]\n"
    "\tif not string match -qr -- '^--.' $w\n"
    "\t\tprintf '%s\\n' $w\n"
    "\t\treturn 0\n"
    "\tend\n"
    "\tset -l opts (__mq_options $argv[1])\n"
    "\tif contains -- $w $opts\n"
    "\t\tprintf '%s\\n' $w\n"
    "\t\treturn 0\n"
    "\tend\n"
    "\tset -l o (string match -- \"$w*\" $opts)\n"
    "\tif test (count $o) = 1\n"
    "\t\tprintf '%s\\n' $o\n"
    "\telse\n"
    "\t\tprintf '%s\\n' $w\n"
    "\tend\n"
    "end\n"
    "\n"
    "# __mq_scan: the words before the current one read as bash and zsh read\n"
    "# them, five lines: the command (mq before it), how many operands it\n"
    "# has, 1 if options have ended (\"--\", or the first operand of a command\n"
    "# that ends them: mq work's CMD), = then its first operand, and the\n"
    "# usage forms still possible (bits, -1: every form): those of the\n"
    "# options typed and of the first operand (__mq_narrow); every form\n"
    "# while an option's value is typed, so that fish finds the option's\n"
    "# row, whatever its forms, and completes its value as bash and zsh do\n"
    "function __mq_scan\n"
    "\tset -l words (commandline -opc)\n"
    "\tset -e words[1]\n"
    "\tset -l cmd mq\n"
    "\tset -l nops 0\n"
    "\tset -l ddash 0\n"
    "\tset -l first ''\n"
    "\tset -l skip 0\n"
    "\tset -l forms -1\n"
    "\tfor w in $words\n"
    "\t\tif test $skip = 1\n"
    "\t\t\tset skip 0\n"
    "\t\telse if test $ddash = 1\n"
    "\t\t\ttest $nops = 0; and set first $w\n"
    "\t\t\tset nops (math $nops + 1)\n"
    "\t\telse if test \"$w\" = --\n"
    "\t\t\tset ddash 1\n"
    "\t\telse if string match -qr -- '^-.' $w\n"
    "\t\t\t# an option (-xVALUE: -x); its value the next word unless\n"
    "\t\t\t# after a =\n"
    "\t\t\tset -l k (string sub -l 2 -- $w)\n"
    "\t\t\tstring match -q -- '--*' $w\n"
    "\t\t\tand set k (__mq_long $cmd (string replace -r -- '=.*' '' $w))\n"
    "\t\t\tset forms (__mq_narrow $forms $cmd $k)\n"
    "\t\t\tif not string match -q -- '*=*' $w\n"
    "\t\t\t\t__mq_value $cmd (__mq_long $cmd $w); and set skip 1\n"
    "\t\t\tend\n"
    "\t\telse if test $cmd = mq\n"
    "\t\t\tset cmd $w\n"
    "\t\telse\n"
    "\t\t\ttest $nops = 0; and set first $w\n"
    "\t\t\tset nops (math $nops + 1)\n"
    "\t\t\tcontains -- $cmd $__mq_posix; and set ddash 1\n"
    "\t\tend\n"
    "\tend\n"
    "\ttest $nops = 0; or set forms (__mq_narrow $forms $cmd \"=$first\")\n"
    "\tif test $skip = 1; or string match -q -- '-*=*' (commandline -ct)\n"
    "\t\tset forms -1\n"
    "\tend\n"
    "\tprintf '%s\\n' $cmd $nops $ddash \"=$first\" $forms\n"
    "end\n"
    "\n"
    "# the mq command on the line, if one is there yet\n"
    "function __mq_command\n"
    "\tset -l s (__mq_scan)\n"
    "\ttest $s[1] != mq; and printf '%s\\n' $s[1]\n"
    "end\n"
    "\n"
    "# __mq_using CMD [FORMS]: the line is CMD's (mq: none yet) and takes\n"
    "# options; FORMS (bits), an option's of some forms only: one of them is\n"
    "# still possible\n"
    "function __mq_using\n"
    "\tset -l s (__mq_scan)\n"
    "\ttest $s[1] = $argv[1] -a $s[3] = 0; or return 1\n"
    "\ttest (count $argv) = 1\n"
    "\tor test (math \"bitand($s[5], $argv[2])\") != 0\n"
    "end\n"
    "\n"
    "# __mq_narrow FORMS CMD KEY: FORMS (bits) narrowed to the forms of CMD\n"
    "# that option KEY (--name, -x) or first operand KEY (=ls) leaves\n"
    "# possible; an option of every form narrows nothing\n"
    "function __mq_narrow\n"
    "\tset -l m (__mq_forms $argv[2] $argv[3])\n"
    "\tif test $m = 0\n"
    "\t\tprintf '%s\\n' $argv[1]\n"
    "\telse\n"
    "\t\tmath \"bitand($argv[1], $m)\"\n"
    "\tend\n"
    "end\n"
    "\n"
    "# the line takes the options every command takes: not after \"--\" nor\n"
    "# mq work's CMD, nor for a command that takes none of them (mq help)\n"
    "function __mq_shared\n"
    "\tset -l s (__mq_scan)\n"
    "\ttest $s[3] = 0; and not contains -- $s[1] $__mq_no_shared\n"
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
    "\tset -l tok (string replace -r -- '^-[^=]*=' '' (commandline -ct))\n"
    "\tset -l pre ''\n"
    "\tset -l used\n"
    "\tif string match -q -- '*,*' $tok\n"
    "\t\tset pre (string replace -r '[^,]*$' '' -- $tok)\n"
    "\t\tset used (string split , -- $pre)\n"
    "\tend\n"
    "\tfor w in $argv\n"
    "\t\tcontains -- $w $used; or printf '%s\\n' $pre$w\n"
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

/* A "complete" line for each row, offered where cond holds */
static void
put_rows(FILE *f, const char *cond, const struct opt *o)
{
	for (; o->name; o++) {
		if (o->flags & OPT_HIDDEN)
			continue;
		fputs("complete -c mq", f);
		/* a row of some forms only: cond (__mq_using) is given them */
		if (o->forms)
			fprintf(f, " -n '%s %u'", cond, o->forms);
		else
			fprintf(f, " -n '%s'", cond);
		if (o->short_name)
			fprintf(f, " -s %c", o->short_name);
		fprintf(f, " -l %s", o->name);
		if (o->arg) {
			enum complete k;
			char words[160];

			k = value_kind(o, words, sizeof words);
			put_fish_value(f, k, words);
		}
		fputs(" -d ", f);
		put_quoted(f, o->help);
		fputc('\n', f);
	}
}

/* "case 'cmd:--name' 'cmd:-x'": the forms key leaves possible */
static void
put_fish_forms(FILE *f, const struct command *c, const char *key,
    const char *shrt, unsigned forms)
{
	fprintf(f, "\tcase '%s:%s'", c->name, key);
	if (shrt)
		fprintf(f, " '%s:%s'", c->name, shrt);
	fprintf(f, "\n\t\techo %u\n", forms);
}

/* What fish runs to offer an operand of the kind */
static void
put_fish_action(FILE *f, enum complete k, const char *words)
{
	size_t i;

	switch (k) {
	case COMPLETE_FILE:
		fputs("__fish_complete_path (commandline -ct)", f);
		break;
	case COMPLETE_DIR:
		fputs("__fish_complete_directories (commandline -ct)", f);
		break;
	case COMPLETE_QUEUE:	fputs("__mq_queues", f); break;
	case COMPLETE_QUEUES:	fputs("__mq_queues list", f); break;
	case COMPLETE_SCHEDULE:	fputs("__mq_queues schedules", f); break;
	case COMPLETE_WORDS:	fprintf(f, "printf '%%s\\n' %s", words); break;
	case COMPLETE_WORD_LIST: fprintf(f, "__mq_list %s", words); break;
	case COMPLETE_PROGRAM:	fputs("__mq_programs", f); break;
	case COMPLETE_COMMAND:
		fputs("printf '%s\\n'", f);
		for (i = 0; commands[i]; i++)
			fprintf(f, " %s", commands[i]->name);
		break;
	default:		fputs("true", f); break;
	}
}

/* "case 'cmd:N:LEAD'" and what offers that operand */
static void
put_fish_operand(FILE *f, const struct command *c, const char *n,
    const char *lead, enum complete k, const char *words)
{
	fprintf(f, "\tcase '%s:%s:%s'\n\t\t", c->name, n, lead);
	put_fish_action(f, k, words);
	fputc('\n', f);
}

/* The tables: __mq_options CMD, __mq_value CMD OPTION (status 0 if it
 * takes a value), __mq_operand (what the operand being typed may be) */
static void
put_fish_tables(FILE *f)
{
	const struct command *c;
	const struct opt *tables[2], *o;
	size_t i;
	int t, nt;

	fputs("function __mq_options\n\tswitch $argv[1]\n", f);
	for (i = 0, c = mq_main; c; c = commands[i++]) {
		fprintf(f, "\tcase %s\n\t\tprintf '%%s\\n'",
		    c->flags & CMD_MAIN ? "mq" : c->name);
		nt = option_tables(c, tables);
		for (t = 0; t < nt; t++)
			for (o = tables[t]; o->name; o++)
				if (!(o->flags & OPT_HIDDEN))
					fprintf(f, " --%s", o->name);
		fputc('\n', f);
	}
	fputs("\tend\nend\n\nfunction __mq_value\n\tswitch \"$argv[1]:$argv[2]\"\n",
	    f);
	for (i = 0, c = mq_main; c; c = commands[i++]) {
		nt = option_tables(c, tables);
		for (t = 0; t < nt; t++)
			for (o = tables[t]; o->name; o++) {
				if (o->arg == NULL || (o->flags & OPT_HIDDEN))
					continue;
				fprintf(f, "\tcase '%s:--%s'",
				    c->flags & CMD_MAIN ? "mq" : c->name, o->name);
				if (o->short_name)
					fprintf(f, " '%s:-%c'", c->flags &
					    CMD_MAIN ? "mq" : c->name,
					    o->short_name);
				fputs("\n\t\treturn 0\n", f);
			}
	}
	fputs("\tend\n\treturn 1\nend\n\n"
	    "# what the operand being typed may be: nothing where the command\n"
	    "# takes no more; before \"--\" no word with a leading - (read as\n"
	    "# options: a queue \"-rf\" is named after it, mq pause -- -rf)\n"
	    "function __mq_operand\n\tset -l s (__mq_scan)\n"
	    "\ttest $s[1] = mq; and return\n"
	    "\tset -l first (string sub -s 2 -- $s[4])\n"
	    "\tif test $s[3] = 1\n"
	    "\t\t__mq_operand_of $s[1] $s[2] $first\n"
	    "\telse\n"
	    "\t\t__mq_operand_of $s[1] $s[2] $first | string match -v -- '-*'\n"
	    "\tend\nend\n\n"
	    "# __mq_operand_of CMD N FIRST: what completes its operand N (from 0)\n"
	    "function __mq_operand_of\n"
	    "\tswitch \"$argv[1]:$argv[2]:$argv[3]\"\n", f);
	for (i = 0; (c = commands[i]) != NULL; i++)
		each_operand(f, c, put_fish_operand);
	fputs("\tend\nend\n\n"
	    "# __mq_forms CMD KEY: the usage forms of CMD (bits) that option\n"
	    "# KEY (--name, -x) or first operand KEY (=ls) leaves possible; 0:\n"
	    "# it is in every form\nfunction __mq_forms\n"
	    "\tswitch \"$argv[1]:$argv[2]\"\n", f);
	each_forms(f, put_fish_forms);
	fputs("\tcase '*'\n\t\techo 0\n\tend\nend\n\n", f);
}

void
put_fish_completion(FILE *f)
{
	const struct command *c;
	char cond[64];
	size_t i;

	fputs("# fish completion for mq(1), written by 'mq completion fish' "
	    "from mq's\n# option tables.\n\nset -g __mq_posix", f);
	for (i = 0; commands[i]; i++)
		if (commands[i]->flags & CMD_POSIX)
			fprintf(f, " %s", commands[i]->name);
	fputs("\nset -g __mq_no_shared", f);
	for (i = 0; commands[i]; i++)
		if (commands[i]->flags & CMD_NO_SHARED)
			fprintf(f, " %s", commands[i]->name);
	fputs("\n\n", f);
	put_fish_tables(f);
	fputs(fish_body, f);
	fputs(fish_values, f);
	fputs(fish_queues, f);
	for (i = 0; (c = commands[i]) != NULL; i++) {
		fprintf(f, "complete -c mq -n 'not __mq_command' -a %s -d ",
		    c->name);
		put_quoted(f, c->summary);
		fputc('\n', f);
	}
	put_rows(f, "__mq_using mq", mq_main->opts);
	put_rows(f, "__mq_shared", shared_opts);
	for (i = 0; (c = commands[i]) != NULL; i++) {
		snprintf(cond, sizeof cond, "__mq_using %s", c->name);
		put_rows(f, cond, c->opts);
	}
	fputs("complete -c mq -n __mq_command -x -a '(__mq_operand)'\n", f);
}
