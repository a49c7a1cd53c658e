/*
 * completion/bash.c: the bash completion script, and the tables of
 * commands and options that the bash and zsh scripts share, written from
 * the option tables. It needs no bash-completion package: complete -F
 * and compgen only.
 */
#include "completion.h"

/* _mq_reply, and _mq_unquote: a word as bash would pass it, with nothing run */
static const char bash_unquote[] =
    "\n"
    "# _mq_reply COMPGEN-ARGS...: COMPREPLY from compgen, one word a line\n"
    "_mq_reply()\n"
    "{\n"
    "\tmapfile -t COMPREPLY < <(compgen \"$@\" 2>/dev/null)\n"
    "}\n"
    "\n"
    "# _mq_unquote WORD: the words bash makes of WORD as typed, into the array\n"
    "# _mq_u, without running anything: quotes ('...', \"...\", $'...') and\n"
    "# backslashes removed; a leading ~, ~+, ~- or ~NAME, and $NAME and\n"
    "# ${NAME} expanded (unquoted: split at spaces, tabs and newlines).\n"
    "# $(...), `...`, $((...)), ${NAME...} with an operator and globs stay as\n"
    "# typed: what they would make is not known without running them.\n"
    "_mq_unquote()\n"
    "{\n"
    "\tlocal _mq_w=$1 _mq_f= _mq_q= _mq_c _mq_n _mq_v _mq_i=0 _mq_on=0 _mq_o\n"
    "\tlocal _mq_ws=$' \\t\\n'\n"
    "\t_mq_u=()\n"
    "\tif [[ $_mq_w == '~'* ]]; then\n"
    "\t\t_mq_n=${_mq_w%%/*}\n"
    "\t\t_mq_n=${_mq_n#'~'}\n"
    "\t\t_mq_v=\n"
    "\t\tcase $_mq_n in\n"
    "\t\t'') _mq_v=$HOME ;;\n"
    "\t\t+) _mq_v=$PWD ;;\n"
    "\t\t-) _mq_v=$OLDPWD ;;\n"
    "\t\t*)\n"
    "\t\t\t# a user name, checked: no other text reaches eval\n"
    "\t\t\tif [[ $_mq_n =~ ^[A-Za-z0-9_][A-Za-z0-9._-]*$ ]]; then\n"
    "\t\t\t\teval \"_mq_v=~$_mq_n\"\n"
    "\t\t\t\t[[ $_mq_v == '~'* ]] && _mq_v=\n"
    "\t\t\tfi ;;\n"
    "\t\tesac\n"
    "\t\tif [ -n \"$_mq_v\" ]; then\n"
    "\t\t\t_mq_f=$_mq_v\n"
    "\t\t\t_mq_on=1\n"
    "\t\t\t_mq_i=$((${#_mq_n} + 1))\n"
    "\t\tfi\n"
    "\tfi\n"
    "\twhile [ \"$_mq_i\" -lt \"${#_mq_w}\" ]; do\n"
    "\t\t_mq_c=${_mq_w:_mq_i:1}\n"
    "\t\t_mq_i=$((_mq_i + 1))\n"
    "\t\tif [ \"$_mq_q\" = \"'\" ]; then\n"
    "\t\t\tif [ \"$_mq_c\" = \"'\" ]; then _mq_q=; else _mq_f+=$_mq_c; fi\n"
    "\t\t\tcontinue\n"
    "\t\tfi\n"
    "\t\t_mq_o=$_mq_on\n"
    "\t\t_mq_on=1\n"
    "\t\tcase $_mq_c in\n"
    "\t\t\\\\)\n"
    "\t\t\t_mq_c=${_mq_w:_mq_i:1}\n"
    "\t\t\t_mq_i=$((_mq_i + 1))\n"
    "\t\t\tif [ \"$_mq_q\" = '\"' ]; then\n"
    "\t\t\t\tcase $_mq_c in\n"
    "\t\t\t\t'$'|'`'|'\"'|\\\\) _mq_f+=$_mq_c ;;\n"
    "\t\t\t\t$'\\n') ;;\n"
    "\t\t\t\t*) _mq_f+=\\\\$_mq_c ;;\n"
    "\t\t\t\tesac\n"
    "\t\t\telif [ \"$_mq_c\" != $'\\n' ]; then\n"
    "\t\t\t\t_mq_f+=$_mq_c\n"
    "\t\t\tfi ;;\n"
    "\t\t\\')\n"
    "\t\t\tif [ \"$_mq_q\" = '\"' ]; then _mq_f+=$_mq_c; else _mq_q=\"'\"; fi ;;\n"
    "\t\t\\\")\n"
    "\t\t\tif [ \"$_mq_q\" = '\"' ]; then _mq_q=; else _mq_q='\"'; fi ;;\n"
    "\t\t'$')\n"
    "\t\t\t_mq_v=${_mq_w:_mq_i}\n"
    "\t\t\tif [ -z \"$_mq_q\" ] && [[ $_mq_v == \\'* ]]; then\n"
    "\t\t\t\t# $'...': its backslash escapes, as printf %b reads them\n"
    "\t\t\t\t_mq_n=\n"
    "\t\t\t\t_mq_i=$((_mq_i + 1))\n"
    "\t\t\t\twhile [ \"$_mq_i\" -lt \"${#_mq_w}\" ]; do\n"
    "\t\t\t\t\t_mq_c=${_mq_w:_mq_i:1}\n"
    "\t\t\t\t\t_mq_i=$((_mq_i + 1))\n"
    "\t\t\t\t\t[ \"$_mq_c\" = \"'\" ] && break\n"
    "\t\t\t\t\tif [ \"$_mq_c\" = \\\\ ]; then\n"
    "\t\t\t\t\t\t_mq_c=${_mq_w:_mq_i:1}\n"
    "\t\t\t\t\t\t_mq_i=$((_mq_i + 1))\n"
    "\t\t\t\t\t\tcase $_mq_c in\n"
    "\t\t\t\t\t\t\\'|\\\"|\\?) _mq_n+=$_mq_c ;;\n"
    "\t\t\t\t\t\t*) _mq_n+=\\\\$_mq_c ;;\n"
    "\t\t\t\t\t\tesac\n"
    "\t\t\t\t\telse\n"
    "\t\t\t\t\t\t_mq_n+=$_mq_c\n"
    "\t\t\t\t\tfi\n"
    "\t\t\t\tdone\n"
    "\t\t\t\tprintf -v _mq_v %b \"$_mq_n\"\n"
    "\t\t\t\t_mq_f+=$_mq_v\n"
    "\t\t\telif [[ $_mq_v =~ ^\\{([A-Za-z_][A-Za-z0-9_]*)\\} ||\n"
    "\t\t\t    $_mq_v =~ ^([A-Za-z_][A-Za-z0-9_]*) ]]; then\n"
    "\t\t\t\t_mq_n=${BASH_REMATCH[1]}\n"
    "\t\t\t\t_mq_i=$((_mq_i + ${#BASH_REMATCH[0]}))\n"
    "\t\t\t\t_mq_v=${!_mq_n}\n"
    "\t\t\t\tif [ -n \"$_mq_q\" ]; then\n"
    "\t\t\t\t\t_mq_f+=$_mq_v\n"
    "\t\t\t\t\tcontinue\n"
    "\t\t\t\tfi\n"
    "\t\t\t\t# unquoted: split into words\n"
    "\t\t\t\t_mq_on=$_mq_o\n"
    "\t\t\t\twhile [ -n \"$_mq_v\" ]; do\n"
    "\t\t\t\t\tcase $_mq_v in\n"
    "\t\t\t\t\t[$_mq_ws]*)\n"
    "\t\t\t\t\t\t[ \"$_mq_on\" = 1 ] && _mq_u+=(\"$_mq_f\")\n"
    "\t\t\t\t\t\t_mq_f=\n"
    "\t\t\t\t\t\t_mq_on=0\n"
    "\t\t\t\t\t\t_mq_v=${_mq_v#[$_mq_ws]} ;;\n"
    "\t\t\t\t\t*)\n"
    "\t\t\t\t\t\t_mq_n=${_mq_v%%[$_mq_ws]*}\n"
    "\t\t\t\t\t\t_mq_f+=$_mq_n\n"
    "\t\t\t\t\t\t_mq_on=1\n"
    "\t\t\t\t\t\t_mq_v=${_mq_v#\"$_mq_n\"} ;;\n"
    "\t\t\t\t\tesac\n"
    "\t\t\t\tdone\n"
    "\t\t\telse\n"
    "\t\t\t\t_mq_f+='$'\n"
    "\t\t\tfi ;;\n"
    "\t\t*) _mq_f+=$_mq_c ;;\n"
    "\t\tesac\n"
    "\tdone\n"
    "\t[ \"$_mq_on\" = 1 ] && _mq_u+=(\"$_mq_f\")\n"
    "\treturn 0\n"
    "}\n"
    "\n";

/* the rest: _mq_queues and _mq_complete (then _mq_long, then _mq) */
static const char bash_body[] =
    "# _mq_queues: the queue names of the table, through mq itself, given the\n"
    "# words typed before the current one, as bash would pass them to mq\n"
    "# (_mq_unquote): mq reads its settings from them as it would read its\n"
    "# command line (nothing when no server answers). COMP_WORDS split\n"
    "# \"--opt=value\" at the \"=\" (and at \":\"): the words are joined again\n"
    "# where COMP_LINE has no space between them.\n"
    "# _mq_queues --schedules: the calendar schedules' names, the same way.\n"
    "_mq_queues()\n"
    "{\n"
    "\tlocal what=${1:---queues}\n"
    "\tlocal line=${COMP_LINE:0:COMP_POINT} rest w j=0 k\n"
    "\tlocal -a raw=() args=() _mq_u\n"
    "\twhile [ \"$j\" -le \"$COMP_CWORD\" ]; do\n"
    "\t\tw=${COMP_WORDS[j]}\n"
    "\t\trest=${line#\"${line%%[![:space:]]*}\"}\n"
    "\t\tif [ \"$j\" -gt 0 ] && [ \"${#rest}\" -eq \"${#line}\" ]; then\n"
    "\t\t\traw[${#raw[@]}-1]+=$w\n"
    "\t\telse\n"
    "\t\t\traw+=(\"$w\")\n"
    "\t\tfi\n"
    "\t\tline=${rest#\"$w\"}\n"
    "\t\tj=$((j + 1))\n"
    "\tdone\n"
    "\tfor ((k = 1; k < ${#raw[@]} - 1; k++)); do\n"
    "\t\t_mq_unquote \"${raw[k]}\"\n"
    "\t\targs+=(\"${_mq_u[@]}\")\n"
    "\tdone\n"
    "\t_mq_unquote \"${raw[0]}\"\n"
    "\t\"${_mq_u[0]:-mq}\" completion \"$what\" -- \"${args[@]}\" 2>/dev/null\n"
    "}\n"
    "\n"
    "# _mq_list WORD...: completes the last item of the comma-separated list\n"
    "# $cur with the WORDs not in the list yet (a list names each once)\n"
    "_mq_list()\n"
    "{\n"
    "\tlocal pre= last=$cur w left=\n"
    "\tcase $cur in *,*) pre=${cur%,*}, last=${cur##*,} ;; esac\n"
    "\tfor w in \"$@\"; do\n"
    "\t\t[[ ,$pre == *\",$w,\"* ]] || left+=\"$w \"\n"
    "\tdone\n"
    "\t_mq_reply -P \"$pre\" -W \"$left\" -- \"$last\"\n"
    "}\n"
    "\n"
    "# _mq_programs: the programs $cur may name, as mq work runs them\n"
    "# (execvp): files with a / in it, else executables of PATH, not the\n"
    "# shell's keywords, functions, aliases or builtins (unless a file of\n"
    "# PATH has the name too)\n"
    "_mq_programs()\n"
    "{\n"
    "\tlocal w\n"
    "\tif [[ $cur == */* ]]; then\n"
    "\t\tcompopt -o filenames 2>/dev/null\n"
    "\t\t_mq_reply -c -- \"$cur\"\n"
    "\t\treturn\n"
    "\tfi\n"
    "\tCOMPREPLY=()\n"
    "\twhile IFS= read -r w; do\n"
    "\t\ttype -P -- \"$w\" >/dev/null 2>&1 && COMPREPLY+=(\"$w\")\n"
    "\tdone < <(compgen -c -- \"$cur\" 2>/dev/null | LC_ALL=C sort -u)\n"
    "}\n"
    "\n"
    "# _mq_complete KIND [WORD...]: completes $cur as a value of that kind\n"
    "_mq_complete()\n"
    "{\n"
    "\tlocal -a q\n"
    "\tcase $1 in\n"
    "\tqueue) _mq_reply -W \"$(_mq_queues)\" -- \"$cur\" ;;\n"
    "\tschedule) _mq_reply -W \"$(_mq_queues --schedules)\" -- \"$cur\" ;;\n"
    "\tqueues)\n"
    "\t\tmapfile -t q < <(_mq_queues)\n"
    "\t\t_mq_list \"${q[@]}\" ;;\n"
    "\twordlist) shift; _mq_list \"$@\" ;;\n"
    "\tfile)\n"
    "\t\tcompopt -o filenames 2>/dev/null\n"
    "\t\t_mq_reply -f -- \"$cur\" ;;\n"
    "\tdir)\n"
    "\t\tcompopt -o filenames 2>/dev/null\n"
    "\t\t_mq_reply -d -- \"$cur\" ;;\n"
    "\twords) shift; _mq_reply -W \"$*\" -- \"$cur\" ;;\n"
    "\tprogram) _mq_programs ;;\n"
    "\tcommand) _mq_reply -W \"$_mq_commands\" -- \"$cur\" ;;\n"
    "\t*) COMPREPLY=() ;;\n"
    "\tesac\n"
    "}\n"
    "\n"
    ;

/* _mq itself */
static const char bash_main[] =
    "_mq()\n"
    "{\n"
    "\tlocal cur=${COMP_WORDS[COMP_CWORD]} w cmd=mq vopt= ddash=0 nops=0\n"
    "\tlocal i=1 _mq_r _mq_l first= forms=-1\n"
    "\tCOMPREPLY=()\n"
    "\twhile [ \"$i\" -lt \"$COMP_CWORD\" ]; do\n"
    "\t\tw=${COMP_WORDS[i]}\n"
    "\t\tif [ \"$ddash\" = 1 ]; then\n"
    "\t\t\t[ \"$nops\" = 0 ] && first=$w\n"
    "\t\t\tnops=$((nops + 1))\n"
    "\t\telif [ \"$w\" = -- ]; then\n"
    "\t\t\tddash=1\n"
    "\t\telif [[ $w == -?* ]]; then\n"
    "\t\t\t_mq_narrow \"$cmd\" \"$w\"\n"
    "\t\t\t_mq_long \"$cmd\" \"$w\"\n"
    "\t\t\tw=$_mq_l\n"
    "\t\t\t_mq_value \"$cmd\" \"$w\"\n"
    "\t\t\tif [ -n \"$_mq_r\" ]; then\n"
    "\t\t\t\t# \"--opt=value\" split at the \"=\" by bash\n"
    "\t\t\t\tif [ \"${COMP_WORDS[i+1]}\" = = ]; then\n"
    "\t\t\t\t\ti=$((i + 1))\n"
    "\t\t\t\t\t[ \"$i\" -eq \"$((COMP_CWORD - 1))\" ] &&\n"
    "\t\t\t\t\t    vopt=$w && break\n"
    "\t\t\t\tfi\n"
    "\t\t\t\tif [ \"$i\" -eq \"$((COMP_CWORD - 1))\" ]; then\n"
    "\t\t\t\t\tvopt=$w\n"
    "\t\t\t\t\tbreak\n"
    "\t\t\t\tfi\n"
    "\t\t\t\ti=$((i + 1))\n"
    "\t\t\tfi\n"
    "\t\telif [ \"$cmd\" = mq ]; then\n"
    "\t\t\tcmd=$w\n"
    "\t\telse\n"
    "\t\t\t[ \"$nops\" = 0 ] && first=$w\n"
    "\t\t\tnops=$((nops + 1))\n"
    "\t\t\t[[ $_mq_posix == *\" $cmd \"* ]] && ddash=1\n"
    "\t\tfi\n"
    "\t\ti=$((i + 1))\n"
    "\tdone\n"
    "\t# the forms its first operand leaves possible (schedule ls)\n"
    "\t[ \"$nops\" = 0 ] || _mq_narrow \"$cmd\" \"=$first\"\n"
    "\tif [ -z \"$vopt\" ] && [ \"$cur\" = = ] &&\n"
    "\t    [ \"$COMP_CWORD\" -gt 1 ]; then\n"
    "\t\t_mq_long \"$cmd\" \"${COMP_WORDS[COMP_CWORD-1]}\"\n"
    "\t\t_mq_value \"$cmd\" \"$_mq_l\"\n"
    "\t\t[ -n \"$_mq_r\" ] && vopt=$_mq_l && cur=\n"
    "\telif [ -z \"$vopt\" ] && [ \"$ddash\" = 0 ] &&\n"
    "\t    [[ $cur == --*=* ]]; then\n"
    "\t\t_mq_long \"$cmd\" \"${cur%%=*}\"\n"
    "\t\tvopt=$_mq_l\n"
    "\t\tcur=${cur#*=}\n"
    "\tfi\n"
    "\tif [ -n \"$vopt\" ]; then\n"
    "\t\t_mq_value \"$cmd\" \"$vopt\"\n"
    "\t\t_mq_complete $_mq_r\n"
    "\telif [ \"$ddash\" = 0 ] && [[ $cur == -* ]]; then\n"
    "\t\t_mq_offer \"$cmd\"\n"
    "\t\t_mq_reply -W \"$_mq_r\" -- \"$cur\"\n"
    "\telif [ \"$cmd\" = mq ]; then\n"
    "\t\t_mq_reply -W \"$_mq_commands\" -- \"$cur\"\n"
    "\telse\n"
    "\t\t_mq_operand \"$cmd\" \"$nops\" \"$first\"\n"
    "\t\t_mq_complete $_mq_r\n"
    "\t\t# before \"--\" a word with a leading - is read as options\n"
    "\t\t# (a queue \"-rf\" is named after it: mq pause -- -rf)\n"
    "\t\tif [ \"$ddash\" = 0 ]; then\n"
    "\t\t\tfor i in \"${!COMPREPLY[@]}\"; do\n"
    "\t\t\t\t[[ ${COMPREPLY[i]} == -* ]] && unset 'COMPREPLY[i]'\n"
    "\t\t\tdone\n"
    "\t\t\tCOMPREPLY=(\"${COMPREPLY[@]}\")\n"
    "\t\tfi\n"
    "\tfi\n"
    "\treturn 0\n"
    "}\n"
    "complete -F _mq mq\n";

static const char *const kinds[] = {
	"none", "duration", "queue", "queues", "file", "dir", "words",
	"program", "command", "wordlist", "schedule"
};

void
put_quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s == '\n' ? ' ' : *s, f);
	fputc('\'', f);
}

void
put_kind(FILE *f, enum complete k, const char *words)
{
	fputs(kinds[k], f);
	if (k == COMPLETE_WORDS || k == COMPLETE_WORD_LIST)
		fprintf(f, " %s", words);
}

/* The option names of the rows, each after a space but the very first
 * (*first set) */
static void
put_names(FILE *f, const struct opt *o, int *first)
{
	for (; o->name; o++) {
		if (o->flags & OPT_HIDDEN)
			continue;
		if (o->short_name)
			fprintf(f, "%s-%c", *first ? "" : " ", o->short_name),
			    *first = 0;
		fprintf(f, "%s--%s", *first ? "" : " ", o->name);
		*first = 0;
	}
}

/* "cmd:--name|cmd:-x) _mq_r='kind' ;;" for each row with a value */
static void
put_values(FILE *f, const char *cmd, const struct opt *o)
{
	enum complete k;
	char words[160];

	for (; o->name; o++) {
		if (o->arg == NULL || (o->flags & OPT_HIDDEN))
			continue;
		fprintf(f, "\t%s:--%s", cmd, o->name);
		if (o->short_name)
			fprintf(f, "|%s:-%c", cmd, o->short_name);
		fputs(") _mq_r=", f);
		fputc('\'', f);
		k = value_kind(o, words, sizeof words);
		put_kind(f, k, words);
		fputs("' ;;\n", f);
	}
}

/* "cmd:--name|cmd:-x) _mq_r=FORMS ;;": the forms key leaves possible */
static void
put_forms(FILE *f, const struct command *c, const char *key,
    const char *shrt, unsigned forms)
{
	fprintf(f, "\t%s:%s", c->name, key);
	if (shrt)
		fprintf(f, "|%s:%s", c->name, shrt);
	fprintf(f, ") _mq_r=%u ;;\n", forms);
}

/* "cmd:N:LEAD) _mq_r='kind' ;;": what completes an operand there */
static void
put_operand(FILE *f, const struct command *c, const char *n,
    const char *lead, enum complete k, const char *words)
{
	fprintf(f, "\t%s:%s:%s) _mq_r='", c->name, n, lead);
	put_kind(f, k, words);
	fputs("' ;;\n", f);
}

static const char *
key(const struct command *c)
{
	return c->flags & CMD_MAIN ? "mq" : c->name;
}

void
put_sh_long(FILE *f, const char *words)
{
	fprintf(f, "# _mq_long CMD WORD: WORD, or the one option of CMD it "
	    "abbreviates (as\n# mq reads --def for --defaults-file; a name "
	    "in full is that option,\n# --clear not --clear-rate), in _mq_l\n"
	    "_mq_long()\n{\n\tlocal o n=0\n\t_mq_l=$2\n"
	    "\t[[ $2 == --?* ]] || return 0\n\t_mq_options \"$1\"\n"
	    "\tfor o in %s; do\n"
	    "\t\t[[ $o == \"$2\" ]] && _mq_l=$2 && return 0\n"
	    "\t\t[[ $o == \"$2\"* ]] && n=$((n + 1)) && _mq_l=$o\n"
	    "\tdone\n\t[[ $n == 1 ]] || _mq_l=$2\n}\n\n", words);
}

void
put_sh_forms(FILE *f, const char *words)
{
	fprintf(f, "# _mq_narrow CMD WORD: narrows the usage forms still "
	    "possible ($forms of\n# the caller, bits; -1: every form) to those "
	    "of CMD's option WORD as typed\n# (an abbreviation, --name=value, "
	    "-xVALUE: its option) or of its first\n# operand =WORD (=ls); an "
	    "option of every form narrows nothing\n_mq_narrow()\n{\n"
	    "\tlocal k=$2\n\tcase $k in\n"
	    "\t--*) _mq_long \"$1\" \"${k%%%%=*}\"; k=$_mq_l ;;\n"
	    "\t-*) k=${k:0:2} ;;\n\tesac\n\t_mq_forms \"$1\" \"$k\"\n"
	    "\t(( _mq_r == 0 )) || forms=$(( forms & _mq_r ))\n\treturn 0\n}\n\n"
	    "# _mq_offer CMD: the options of CMD in the forms still possible "
	    "($forms),\n# and those of every form, in _mq_r\n_mq_offer()\n{\n"
	    "\tlocal o r=\n\t_mq_options \"$1\"\n\tfor o in %s; do\n"
	    "\t\t_mq_forms \"$1\" \"$o\"\n"
	    "\t\t(( _mq_r == 0 || (_mq_r & forms) )) && r+=\" $o\"\n"
	    "\tdone\n\t_mq_r=${r# }\n}\n\n", words);
}

void
put_sh_tables(FILE *f)
{
	const struct command *c;
	size_t i;

	fputs("_mq_commands='", f);
	for (i = 0; commands[i]; i++)
		fprintf(f, "%s%s", i ? " " : "", commands[i]->name);
	fputs("'\n_mq_posix=' ", f);
	for (i = 0; commands[i]; i++)
		if (commands[i]->flags & CMD_POSIX)
			fprintf(f, "%s ", commands[i]->name);
	fputs("'\n\n# _mq_options CMD: its options, in _mq_r\n"
	    "_mq_options()\n{\n\tcase $1 in\n", f);
	for (i = 0, c = mq_main; c; c = commands[i++]) {
		int first = 1;

		fprintf(f, "\t%s) _mq_r='", key(c));
		put_names(f, c->opts, &first);
		if (!(c->flags & CMD_NO_SHARED))
			put_names(f, shared_opts, &first);
		fputs("' ;;\n", f);
	}
	fputs("\t*) _mq_r= ;;\n\tesac\n}\n\n"
	    "# _mq_value CMD OPTION: what completes its value, in _mq_r;\n"
	    "# nothing for a flag\n_mq_value()\n{\n\tcase $1:$2 in\n", f);
	for (i = 0, c = mq_main; c; c = commands[i++])
		put_values(f, key(c), c->opts);
	put_values(f, "*", shared_opts);
	fputs("\t*) _mq_r= ;;\n\tesac\n}\n\n"
	    "# _mq_operand CMD N FIRST: what completes its operand N (from 0),\n"
	    "# FIRST the first one, in _mq_r; nothing where CMD takes none\n"
	    "_mq_operand()\n{\n\tcase $1:$2:$3 in\n", f);
	for (i = 0; (c = commands[i]) != NULL; i++)
		each_operand(f, c, put_operand);
	fputs("\t*) _mq_r= ;;\n\tesac\n}\n\n"
	    "# _mq_forms CMD KEY: the usage forms of CMD (bits) that option\n"
	    "# KEY (--name, -x) or first operand KEY (=ls) leaves possible, in\n"
	    "# _mq_r; 0: it is in every form\n"
	    "_mq_forms()\n{\n\tcase $1:$2 in\n", f);
	each_forms(f, put_forms);
	fputs("\t*) _mq_r=0 ;;\n\tesac\n}\n", f);
}

void
put_bash_completion(FILE *f)
{
	fputs("# bash completion for mq(1), written by 'mq completion bash' "
	    "from mq's\n# option tables.\n\n", f);
	put_sh_tables(f);
	fputs(bash_unquote, f);
	fputs(bash_body, f);
	put_sh_long(f, "$_mq_r");
	put_sh_forms(f, "$_mq_r");
	fputs(bash_main, f);
}
