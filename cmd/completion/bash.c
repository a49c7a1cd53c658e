/*
 * completion_bash.c: the bash completion script, and the tables of
 * commands and options that the bash and zsh scripts share, written from
 * the option tables. It needs no bash-completion package: complete -F
 * and compgen only.
 */
#include "completion.h"

static const char bash_body[] =
    "\n"
    "# _mq_reply COMPGEN-ARGS...: COMPREPLY from compgen, one word a line\n"
    "_mq_reply()\n"
    "{\n"
    "\tmapfile -t COMPREPLY < <(compgen \"$@\" 2>/dev/null)\n"
    "}\n"
    "\n"
    "# _mq_queues: the queue names of the table, through mq itself, with the\n"
    "# connection options typed so far (nothing when no server answers)\n"
    "_mq_queues()\n"
    "{\n"
    "\t\"${COMP_WORDS[0]}\" completion --queues \"${_mq_conn[@]}\" \\\n"
    "\t    2>/dev/null\n"
    "}\n"
    "\n"
    "# _mq_complete KIND [WORD...]: completes $cur as a value of that kind\n"
    "_mq_complete()\n"
    "{\n"
    "\tlocal pre= last=$cur\n"
    "\tcase $1 in\n"
    "\tqueue) _mq_reply -W \"$(_mq_queues)\" -- \"$cur\" ;;\n"
    "\tqueues)\n"
    "\t\tcase $cur in *,*) pre=${cur%,*}, last=${cur##*,} ;; esac\n"
    "\t\t_mq_reply -P \"$pre\" -W \"$(_mq_queues)\" -- \"$last\" ;;\n"
    "\tfile)\n"
    "\t\tcompopt -o filenames 2>/dev/null\n"
    "\t\t_mq_reply -f -- \"$cur\" ;;\n"
    "\tdir)\n"
    "\t\tcompopt -o filenames 2>/dev/null\n"
    "\t\t_mq_reply -d -- \"$cur\" ;;\n"
    "\twords) shift; _mq_reply -W \"$*\" -- \"$cur\" ;;\n"
    "\tprogram) _mq_reply -c -- \"$cur\" ;;\n"
    "\tcommand) _mq_reply -W \"$_mq_commands\" -- \"$cur\" ;;\n"
    "\t*) COMPREPLY=() ;;\n"
    "\tesac\n"
    "}\n"
    "\n"
    "_mq()\n"
    "{\n"
    "\tlocal cur=${COMP_WORDS[COMP_CWORD]} w cmd=mq vopt= ddash=0 nops=0\n"
    "\tlocal i=1 _mq_r _mq_conn=()\n"
    "\tCOMPREPLY=()\n"
    "\twhile [ \"$i\" -lt \"$COMP_CWORD\" ]; do\n"
    "\t\tw=${COMP_WORDS[i]}\n"
    "\t\tif [ \"$ddash\" = 1 ]; then\n"
    "\t\t\tnops=$((nops + 1))\n"
    "\t\telif [ \"$w\" = -- ]; then\n"
    "\t\t\tddash=1\n"
    "\t\telif [[ $w == -?* ]]; then\n"
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
    "\t\t\t\t[[ $_mq_conn_opts == *\" $w \"* ]] &&\n"
    "\t\t\t\t    _mq_conn+=(\"$w\" \"${COMP_WORDS[i]}\")\n"
    "\t\t\telse\n"
    "\t\t\t\t[[ $_mq_conn_opts == *\" ${w%%=*} \"* ]] &&\n"
    "\t\t\t\t    _mq_conn+=(\"$w\")\n"
    "\t\t\tfi\n"
    "\t\telif [ \"$cmd\" = mq ]; then\n"
    "\t\t\tcmd=$w\n"
    "\t\telse\n"
    "\t\t\tnops=$((nops + 1))\n"
    "\t\t\t[[ $_mq_posix == *\" $cmd \"* ]] && ddash=1\n"
    "\t\tfi\n"
    "\t\ti=$((i + 1))\n"
    "\tdone\n"
    "\tif [ -z \"$vopt\" ] && [ \"$cur\" = = ] &&\n"
    "\t    [ \"$COMP_CWORD\" -gt 1 ]; then\n"
    "\t\t_mq_value \"$cmd\" \"${COMP_WORDS[COMP_CWORD-1]}\"\n"
    "\t\t[ -n \"$_mq_r\" ] && vopt=${COMP_WORDS[COMP_CWORD-1]} && cur=\n"
    "\telif [ -z \"$vopt\" ] && [ \"$ddash\" = 0 ] &&\n"
    "\t    [[ $cur == --*=* ]]; then\n"
    "\t\tvopt=${cur%%=*}\n"
    "\t\tcur=${cur#*=}\n"
    "\tfi\n"
    "\tif [ -n \"$vopt\" ]; then\n"
    "\t\t_mq_value \"$cmd\" \"$vopt\"\n"
    "\t\t_mq_complete $_mq_r\n"
    "\telif [ \"$ddash\" = 0 ] && [[ $cur == -* ]]; then\n"
    "\t\t_mq_options \"$cmd\"\n"
    "\t\t_mq_reply -W \"$_mq_r\" -- \"$cur\"\n"
    "\telif [ \"$cmd\" = mq ]; then\n"
    "\t\t_mq_reply -W \"$_mq_commands\" -- \"$cur\"\n"
    "\telse\n"
    "\t\t_mq_operand \"$cmd\"\n"
    "\t\tcase $_mq_r in\n"
    "\t\tprogram) [ \"$nops\" -gt 0 ] && _mq_r=file ;;\n"
    "\t\tqueue) [ \"$nops\" -gt 0 ] && _mq_r= ;;\n"
    "\t\tesac\n"
    "\t\t_mq_complete $_mq_r\n"
    "\tfi\n"
    "\treturn 0\n"
    "}\n"
    "complete -F _mq mq\n";

static const char *const kinds[] = {
	"none", "duration", "queue", "queues", "file", "dir", "words",
	"program", "command"
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
	if (k == COMPLETE_WORDS)
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
	for (; o->name; o++) {
		if (o->arg == NULL || (o->flags & OPT_HIDDEN))
			continue;
		fprintf(f, "\t%s:--%s", cmd, o->name);
		if (o->short_name)
			fprintf(f, "|%s:-%c", cmd, o->short_name);
		fputs(") _mq_r=", f);
		fputc('\'', f);
		put_kind(f, o->complete, o->words);
		fputs("' ;;\n", f);
	}
}

static const char *
key(const struct command *c)
{
	return c->flags & CMD_MAIN ? "mq" : c->name;
}

void
put_sh_tables(FILE *f)
{
	const struct command *c;
	size_t i;

	fputs("_mq_commands='", f);
	for (i = 0; commands[i]; i++)
		fprintf(f, "%s ", commands[i]->name);
	fputs("help'\n_mq_posix=' ", f);
	for (i = 0; commands[i]; i++)
		if (commands[i]->flags & CMD_POSIX)
			fprintf(f, "%s ", commands[i]->name);
	fputs("'\n_mq_conn_opts=' ", f);
	for (i = 0; shared_opts[i].name; i++)
		if (shared_opts[i].id != 'h')
			fprintf(f, "--%s ", shared_opts[i].name);
	fputs("'\n\n# _mq_options CMD: its options, in _mq_r\n"
	    "_mq_options()\n{\n\tcase $1 in\n", f);
	for (i = 0, c = mq_main; c; c = commands[i++]) {
		int first = 1;

		fprintf(f, "\t%s) _mq_r='", key(c));
		put_names(f, c->opts, &first);
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
	    "# _mq_operand CMD: what completes its operands, in _mq_r\n"
	    "_mq_operand()\n{\n\tcase $1 in\n", f);
	for (i = 0; (c = commands[i]) != NULL; i++) {
		if (c->operand_complete == COMPLETE_NONE)
			continue;
		fprintf(f, "\t%s) _mq_r='", c->name);
		put_kind(f, c->operand_complete, c->operand_words);
		fputs("' ;;\n", f);
	}
	fputs("\thelp) _mq_r=command ;;\n\t*) _mq_r= ;;\n\tesac\n}\n", f);
}

void
put_bash_completion(FILE *f)
{
	fputs("# bash completion for mq(1), written by 'mq completion bash' "
	    "from mq's\n# option tables.\n\n", f);
	put_sh_tables(f);
	fputs(bash_body, f);
}
