/*
 * completion_zsh.c: the zsh completion script (#compdef mq), written from
 * the option tables: the bash script's tables, zsh's way of offering.
 */
#include "completion.h"

static const char zsh_body[] =
    "\n"
    "# _mq_queues: the queue names of the table, through mq itself, with the\n"
    "# connection options typed so far (nothing when no server answers)\n"
    "_mq_queues()\n"
    "{\n"
    "\t$words[1] completion --queues $_mq_conn 2>/dev/null\n"
    "}\n"
    "\n"
    "# _mq_complete KIND [WORD...]: completes the current word as a value\n"
    "_mq_complete()\n"
    "{\n"
    "\tlocal -a q\n"
    "\tcase $1 in\n"
    "\tqueue)\n"
    "\t\tq=(${(f)\"$(_mq_queues)\"})\n"
    "\t\tcompadd -a q ;;\n"
    "\tqueues)\n"
    "\t\tq=(${(f)\"$(_mq_queues)\"})\n"
    "\t\tcompset -P '*,'\n"
    "\t\tcompadd -a q ;;\n"
    "\tfile) _files ;;\n"
    "\tdir) _files -/ ;;\n"
    "\twords) shift; compadd -- \"$@\" ;;\n"
    "\tprogram) _command_names -e ;;\n"
    "\tcommand) _describe -t commands 'mq command' _mq_command_descs ;;\n"
    "\tduration) _message 'duration (30s, 5m, 1h30m, 2d)' ;;\n"
    "\t*) _message 'value' ;;\n"
    "\tesac\n"
    "}\n"
    "\n"
    "_mq()\n"
    "{\n"
    "\tlocal cur=$PREFIX w cmd=mq vopt= ddash=0 nops=0 i=2 _mq_r\n"
    "\tlocal -a _mq_conn o\n"
    "\twhile (( i < CURRENT )); do\n"
    "\t\tw=$words[i]\n"
    "\t\tif (( ddash )); then\n"
    "\t\t\t(( nops++ ))\n"
    "\t\telif [[ $w == -- ]]; then\n"
    "\t\t\tddash=1\n"
    "\t\telif [[ $w == -?* ]]; then\n"
    "\t\t\t_mq_value $cmd $w\n"
    "\t\t\tif [[ -n $_mq_r ]]; then\n"
    "\t\t\t\tif (( i == CURRENT - 1 )); then\n"
    "\t\t\t\t\tvopt=$w\n"
    "\t\t\t\t\tbreak\n"
    "\t\t\t\tfi\n"
    "\t\t\t\t(( i++ ))\n"
    "\t\t\t\t[[ $_mq_conn_opts == *\" $w \"* ]] &&\n"
    "\t\t\t\t    _mq_conn+=($w $words[i])\n"
    "\t\t\telse\n"
    "\t\t\t\t[[ $_mq_conn_opts == *\" ${w%%=*} \"* ]] &&\n"
    "\t\t\t\t    _mq_conn+=($w)\n"
    "\t\t\tfi\n"
    "\t\telif [[ $cmd == mq ]]; then\n"
    "\t\t\tcmd=$w\n"
    "\t\telse\n"
    "\t\t\t(( nops++ ))\n"
    "\t\t\t[[ $_mq_posix == *\" $cmd \"* ]] && ddash=1\n"
    "\t\tfi\n"
    "\t\t(( i++ ))\n"
    "\tdone\n"
    "\tif [[ -z $vopt && $ddash == 0 && $cur == --*=* ]]; then\n"
    "\t\tvopt=${cur%%=*}\n"
    "\t\tcompset -P '*='\n"
    "\tfi\n"
    "\tif [[ -n $vopt ]]; then\n"
    "\t\t_mq_value $cmd $vopt\n"
    "\t\t_mq_complete ${=_mq_r}\n"
    "\telif (( ! ddash )) && [[ $cur == -* ]]; then\n"
    "\t\t_mq_options $cmd\n"
    "\t\to=(${=_mq_r})\n"
    "\t\tcompadd -a o\n"
    "\telif [[ $cmd == mq ]]; then\n"
    "\t\t_mq_complete command\n"
    "\telse\n"
    "\t\t_mq_operand $cmd\n"
    "\t\tcase $_mq_r in\n"
    "\t\tprogram) (( nops > 0 )) && _mq_r=file ;;\n"
    "\t\tqueue) (( nops > 0 )) && _mq_r= ;;\n"
    "\t\tesac\n"
    "\t\t[[ -n $_mq_r ]] && _mq_complete ${=_mq_r}\n"
    "\tfi\n"
    "\treturn 0\n"
    "}\n"
    "\n"
    "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n"
    "\t_mq \"$@\"\n"
    "else\n"
    "\tcompdef _mq mq\n"
    "fi\n";

void
put_zsh_completion(FILE *f)
{
	size_t i;

	fputs("#compdef mq\n# zsh completion for mq(1), written by 'mq "
	    "completion zsh' from mq's\n# option tables.\n\n", f);
	put_sh_tables(f);
	fputs("_mq_command_descs=(\n", f);
	/* a summary may hold a quote ("a claimed job's lease") */
	for (i = 0; commands[i]; i++) {
		char desc[160];

		snprintf(desc, sizeof desc, "%s:%s", commands[i]->name,
		    commands[i]->summary);
		fputc('\t', f);
		put_quoted(f, desc);
		fputc('\n', f);
	}
	fputs("\t'help:the help of a command'\n)\n", f);
	fputs(zsh_body, f);
}
